/**
 * Just enough of Bicep's surface syntax to read the templates in infra/ where Bicep cannot be compiled:
 * comments, strings (with interpolation), brackets, top-level declarations and object literals. It knows
 * nothing of types or expressions; an expression is kept as its source text.
 */

export type Keyword = "param" | "var" | "resource" | "module" | "output";

export interface Declaration {
  readonly keyword: Keyword;
  readonly name: string;
  /** A resource's type without the API version, a module's path, a param's or output's type. */
  readonly target: string;
  readonly apiVersion: string | undefined;
  readonly existing: boolean;
  /** The source text after `=`: a value, a block, `if (...) {...}` or `[for ...: {...}]`; "" if none. */
  readonly value: string;
}

/** Index just past the string literal that starts at `start` (a `'`). */
function skipString(text: string, start: number): number {
  if (text.startsWith("'''", start)) {
    const end = text.indexOf("'''", start + 3);
    if (end < 0) throw new SyntaxError(`unterminated ''' string at ${start}`);
    return end + 3;
  }
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") i += 2;
    else if (c === "'") return i + 1;
    else if (text.startsWith("${", i)) i = skipInterpolation(text, i + 2);
    else i++;
  }
  throw new SyntaxError(`unterminated string at ${start}`);
}

function skipInterpolation(text: string, start: number): number {
  let depth = 1;
  let i = start;
  while (i < text.length) {
    const c = text[i];
    if (c === "'") {
      i = skipString(text, i);
      continue;
    }
    if (c === "{") depth++;
    if (c === "}" && --depth === 0) return i + 1;
    i++;
  }
  throw new SyntaxError(`unterminated interpolation at ${start}`);
}

/** The text with comments blanked out (newlines kept); strings are left alone. */
export function withoutComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text[i] === "'") {
      const end = skipString(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (text.startsWith("//", i)) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) throw new SyntaxError(`unterminated comment at ${i}`);
      out += text.slice(i, end + 2).replace(/[^\n]/g, " ");
      i = end + 2;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

/** Splits comment-free text at `separators` that sit outside strings and brackets. */
function splitTopLevel(text: string, separators: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? "";
    if (c === "'") {
      i = skipString(text, i);
      continue;
    }
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    else if (depth === 0 && separators.includes(c)) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
    i++;
  }
  if (depth !== 0) throw new SyntaxError(`unbalanced brackets (depth ${depth} at the end)`);
  parts.push(text.slice(from));
  return parts.map((part) => part.trim()).filter((part) => part !== "");
}

const DECLARATION =
  /^(param|var|resource|module|output)\s+(\w+)(?:\s+'([^'@]+)(?:@([^']+))?'|\s+(\w+))?\s*(existing)?\s*(?:=\s*([\s\S]*))?$/;

/** The top-level declarations of a Bicep file, in order (decorators and `targetScope` are skipped). */
export function declarations(source: string): Declaration[] {
  const result: Declaration[] = [];
  for (const statement of splitTopLevel(withoutComments(source), "\n")) {
    const match = DECLARATION.exec(statement);
    if (!match) continue;
    const [, keyword, name, quoted, apiVersion, bare, existing, value] = match;
    result.push({
      keyword: keyword as Keyword,
      name: name ?? "",
      target: quoted ?? bare ?? "",
      apiVersion,
      existing: existing !== undefined,
      value: value?.trim() ?? "",
    });
  }
  return result;
}

/** Top-level statements that are neither declarations, decorators nor `targetScope`: stray text. */
export function strayStatements(source: string): string[] {
  return splitTopLevel(withoutComments(source), "\n").filter(
    (statement) =>
      !DECLARATION.test(statement) && !/^@\w+/.test(statement) && !/^targetScope\s*=/.test(statement),
  );
}

export function declaration(source: string, keyword: Keyword, name: string): Declaration {
  const found = declarations(source).find((d) => d.keyword === keyword && d.name === name);
  if (!found) throw new Error(`no ${keyword} ${name}`);
  return found;
}

/** The first `{...}` block of an expression: the body of `if (...) {...}` or of `[for ...: {...}]` too. */
export function firstObject(expression: string): string {
  const text = withoutComments(expression);
  let i = 0;
  while (i < text.length) {
    if (text[i] === "'") {
      i = skipString(text, i);
      continue;
    }
    if (text[i] === "{") {
      let depth = 0;
      for (let j = i; j < text.length; j++) {
        if (text[j] === "'") {
          j = skipString(text, j) - 1;
          continue;
        }
        if (text[j] === "{") depth++;
        if (text[j] === "}" && --depth === 0) return text.slice(i, j + 1);
      }
      throw new SyntaxError("unbalanced braces");
    }
    i++;
  }
  throw new Error(`no object in ${expression.slice(0, 60)}`);
}

/** The entries of an object literal `{ key: value ... }`: key to the source text of the value. */
export function objectEntries(objectText: string): Map<string, string> {
  const body = firstObject(objectText).slice(1, -1);
  const entries = new Map<string, string>();
  for (const entry of splitTopLevel(body, "\n,")) {
    const match = /^(?:'([^']*)'|(\w+))\s*:\s*([\s\S]+)$/.exec(entry);
    if (!match) throw new SyntaxError(`not an object entry: ${entry}`);
    entries.set(match[1] ?? match[2] ?? "", (match[3] ?? "").trim());
  }
  return entries;
}

/** The elements of an array literal `[a, b]` or `[\n a\n b\n]`, as source text. */
export function arrayElements(arrayText: string): string[] {
  const text = withoutComments(arrayText).trim();
  if (!text.startsWith("[") || !text.endsWith("]"))
    throw new SyntaxError(`not an array: ${text.slice(0, 60)}`);
  return splitTopLevel(text.slice(1, -1), "\n,");
}

/** The value at a path of nested object keys, e.g. `entryAt(module.value, "params", "name")`. */
export function entryAt(objectText: string, ...keys: string[]): string {
  let current = objectText;
  for (const key of keys) {
    const value = objectEntries(current).get(key);
    if (value === undefined) throw new Error(`no entry ${keys.join(".")}`);
    current = value;
  }
  return current;
}

/** The content of a plain string literal (`'text'`, no interpolation), else undefined. */
export function stringLiteral(expression: string): string | undefined {
  const match = /^'((?:[^'\\$]|\\.|\$(?!\{))*)'$/.exec(expression.trim());
  return match?.[1]?.replace(/\\(.)/g, "$1");
}
