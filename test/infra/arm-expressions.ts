/**
 * Just enough of ARM's template expression language to read what `bicep build` emits for infra/: literals,
 * function calls, property and index access. Functions whose value exists only during a deployment
 * (reference(), a principal's id, ...) evaluate to an Unresolved value that keeps the expression's text,
 * so a test can still see where a value comes from.
 */

export class Unresolved {
  constructor(readonly text: string) {}
  toString(): string {
    return `<${this.text}>`;
  }
  /** The last `/` segment: a child resource's own name even when its parent's is unknown. */
  get leaf(): string {
    return this.text.split("/").at(-1) ?? this.text;
  }
}

type Node =
  | { readonly kind: "literal"; readonly value: string | number }
  | { readonly kind: "call"; readonly name: string; readonly args: readonly Node[] }
  | { readonly kind: "property"; readonly target: Node; readonly name: string }
  | { readonly kind: "index"; readonly target: Node; readonly index: Node };

class Parser {
  private i = 0;
  constructor(private readonly text: string) {}

  parse(): Node {
    const node = this.expression();
    this.space();
    if (this.i !== this.text.length) throw new SyntaxError(`unexpected text at ${this.i}: ${this.text}`);
    return node;
  }

  private space(): void {
    while (this.text[this.i] === " ") this.i++;
  }

  private expression(): Node {
    this.space();
    let node = this.primary();
    for (;;) {
      this.space();
      const c = this.text[this.i];
      if (c === ".") {
        this.i++;
        node = { kind: "property", target: node, name: this.identifier() };
      } else if (c === "[") {
        this.i++;
        const index = this.expression();
        this.expect("]");
        node = { kind: "index", target: node, index };
      } else return node;
    }
  }

  private primary(): Node {
    const c = this.text[this.i];
    if (c === "'") return { kind: "literal", value: this.string() };
    if (c !== undefined && /[-\d]/.test(c)) {
      const match = /^-?\d+/.exec(this.text.slice(this.i));
      this.i += match?.[0].length ?? 0;
      return { kind: "literal", value: Number(match?.[0]) };
    }
    const name = this.identifier();
    this.expect("(");
    const args: Node[] = [];
    this.space();
    if (this.text[this.i] !== ")") {
      for (;;) {
        args.push(this.expression());
        this.space();
        if (this.text[this.i] === ",") this.i++;
        else break;
      }
    }
    this.expect(")");
    return { kind: "call", name, args };
  }

  private string(): string {
    let value = "";
    this.i++;
    for (;;) {
      const c = this.text[this.i];
      if (c === undefined) throw new SyntaxError(`unterminated string: ${this.text}`);
      if (c === "'" && this.text[this.i + 1] === "'") {
        value += "'";
        this.i += 2;
      } else if (c === "'") {
        this.i++;
        return value;
      } else {
        value += c;
        this.i++;
      }
    }
  }

  private identifier(): string {
    const match = /^[A-Za-z_][\w]*/.exec(this.text.slice(this.i));
    if (!match) throw new SyntaxError(`expected a name at ${this.i}: ${this.text}`);
    this.i += match[0].length;
    return match[0];
  }

  private expect(c: string): void {
    this.space();
    if (this.text[this.i] !== c) throw new SyntaxError(`expected ${c} at ${this.i}: ${this.text}`);
    this.i++;
  }
}

export interface Scope {
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly copyIndex?: number;
  /** Indexes of the property loops being expanded, by name: `copyIndex('actions')`. */
  readonly copyIndexes?: Readonly<Record<string, number>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Unresolved);

function text(node: Node): string {
  switch (node.kind) {
    case "literal":
      return typeof node.value === "string" ? `'${node.value}'` : String(node.value);
    case "call":
      return `${node.name}(${node.args.map(text).join(", ")})`;
    case "property":
      return `${text(node.target)}.${node.name}`;
    case "index":
      return `${text(node.target)}[${text(node.index)}]`;
  }
}

const display = (value: unknown): string =>
  value instanceof Unresolved ? value.toString() : typeof value === "string" ? value : JSON.stringify(value);

function call(name: string, args: unknown[], node: Node, scope: Scope): unknown {
  const lower = name.toLowerCase();
  const anyUnresolved = args.some((arg) => arg instanceof Unresolved);
  switch (lower) {
    case "parameters":
    case "variables": {
      const table = lower === "parameters" ? scope.parameters : scope.variables;
      const key = String(args[0]);
      if (!(key in table)) throw new Error(`${text(node)}: not declared`);
      return table[key];
    }
    case "copyindex": {
      const index = typeof args[0] === "string" ? scope.copyIndexes?.[args[0]] : scope.copyIndex;
      if (index === undefined) throw new Error(`${text(node)} outside its copy loop`);
      return index + Number(typeof args[0] === "string" ? (args[1] ?? 0) : (args[0] ?? 0));
    }
    case "createarray":
      return args;
    case "createobject": {
      const result: Record<string, unknown> = {};
      for (let i = 0; i < args.length; i += 2) result[String(args[i])] = args[i + 1];
      return result;
    }
    case "true":
      return true;
    case "false":
      return false;
    case "null":
      return null;
    case "length":
      if (args[0] instanceof Unresolved) return new Unresolved(text(node));
      return Array.isArray(args[0]) || typeof args[0] === "string"
        ? args[0].length
        : Object.keys(args[0] as object).length;
    case "items":
      if (!isRecord(args[0])) return new Unresolved(text(node));
      return Object.entries(args[0])
        .sort(([a], [b]) => a.toLowerCase().localeCompare(b.toLowerCase()))
        .map(([key, value]) => ({ key, value }));
    case "empty":
      if (anyUnresolved) return new Unresolved(text(node));
      return args[0] === "" || args[0] === null || (Array.isArray(args[0]) && args[0].length === 0);
    case "not":
      return anyUnresolved ? new Unresolved(text(node)) : !args[0];
    // A known false (and) or true (or) decides, whatever the other operands; otherwise an unknown one leaves it open.
    case "and":
      if (args.includes(false)) return false;
      return anyUnresolved ? new Unresolved(text(node)) : args.every(Boolean);
    case "or":
      if (args.includes(true)) return true;
      return anyUnresolved ? new Unresolved(text(node)) : args.some(Boolean);
    case "equals":
      return anyUnresolved ? new Unresolved(text(node)) : JSON.stringify(args[0]) === JSON.stringify(args[1]);
    case "if":
      if (args[0] instanceof Unresolved) return new Unresolved(text(node));
      return args[0] ? args[1] : args[2];
    case "tryget":
      // Bicep's safe access (`a.?b`): the property, or null where it is absent.
      if (anyUnresolved) return new Unresolved(text(node));
      return isRecord(args[0]) && String(args[1]) in args[0] ? args[0][String(args[1])] : null;
    case "union":
      if (anyUnresolved) return new Unresolved(text(node));
      return Object.assign({}, ...args);
    case "string":
      if (anyUnresolved) return new Unresolved(text(node));
      return typeof args[0] === "string" ? args[0] : JSON.stringify(args[0]);
    case "tolower":
      return anyUnresolved ? new Unresolved(text(node)) : String(args[0]).toLowerCase();
    case "format": {
      // With a part unknown, the rest still shows: `<...resourceToken...>/orders` names the queue.
      const formatted = String(args[0]).replace(/\{(\d+)\}/g, (_, i: string) => display(args[Number(i) + 1]));
      return anyUnresolved ? new Unresolved(formatted) : formatted;
    }
    case "concat":
      if (anyUnresolved) return new Unresolved(text(node));
      return Array.isArray(args[0]) ? args.flat() : args.map(display).join("");
    // Identifiers: kept readable rather than computed, so that a test can compare a scope or a role id.
    case "resourceid":
      return `resourceId(${args.map(display).join(", ")})`;
    case "subscriptionresourceid":
      return `subscriptionResourceId(${args.map(display).join(", ")})`;
    case "extensionresourceid":
      return `extensionResourceId(${args.map(display).join(", ")})`;
    case "guid":
      return `guid(${args.map(display).join(", ")})`;
    default:
      // reference(), subscription(), tenant(), uniqueString(), ...: known only during a deployment.
      return new Unresolved(text(node));
  }
}

function evaluateNode(node: Node, scope: Scope): unknown {
  switch (node.kind) {
    case "literal":
      return node.value;
    case "call":
      return call(
        node.name,
        node.args.map((arg) => evaluateNode(arg, scope)),
        node,
        scope,
      );
    case "property": {
      const target = evaluateNode(node.target, scope);
      if (target instanceof Unresolved) return new Unresolved(`${target.text}.${node.name}`);
      if (!isRecord(target)) throw new Error(`${text(node)}: not an object`);
      return target[node.name];
    }
    case "index": {
      const target = evaluateNode(node.target, scope);
      const index = evaluateNode(node.index, scope);
      if (target instanceof Unresolved || index instanceof Unresolved) return new Unresolved(text(node));
      return (target as Record<string | number, unknown>)[index as string | number];
    }
  }
}

/** A string `[...]` is an expression (`[[` escapes a literal bracket); anything else is a literal. */
export function evaluate(value: unknown, scope: Scope): unknown {
  if (typeof value === "string") {
    if (value.startsWith("[[")) return value.slice(1);
    if (value.startsWith("[") && value.endsWith("]")) {
      return evaluateNode(new Parser(value.slice(1, -1)).parse(), scope);
    }
    return value;
  }
  if (Array.isArray(value)) return value.map((element) => evaluate(element, scope));
  if (isRecord(value)) {
    const result: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (key === "copy" && Array.isArray(v)) Object.assign(result, expandPropertyLoops(v, scope));
      else result[key] = evaluate(v, scope);
    }
    return result;
  }
  return value;
}

/** `"copy": [{ name, count, input }]` inside properties: a Bicep `[for ...]` that builds a property's array. */
function expandPropertyLoops(loops: unknown[], scope: Scope): Record<string, unknown[]> {
  const result: Record<string, unknown[]> = {};
  for (const loop of loops as { name: string; count: unknown; input: unknown }[]) {
    const count = evaluate(loop.count, scope);
    if (typeof count !== "number") throw new Error(`property loop ${loop.name}: count ${display(count)}`);
    result[loop.name] = Array.from({ length: count }, (_, i) =>
      evaluate(loop.input, { ...scope, copyIndexes: { ...scope.copyIndexes, [loop.name]: i } }),
    );
  }
  return result;
}
