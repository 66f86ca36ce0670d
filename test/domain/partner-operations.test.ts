import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { DATA_CLASSES } from "../../src/domain/data-classification.js";
import {
  AGENT_PAYLOAD_FIELD_CLASSES,
  DECLARED_OPERATIONS,
  PARTNER_OPERATIONS,
  stepPayload,
} from "../../src/domain/partner-operations.js";
import { sampleOrder } from "../support/records.js";

const ROOT = join(import.meta.dirname, "../..");
const FOLDERS = ["src", "laptop", "partner", "storefront", "bench", "tools", "web", "infra"];

/**
 * The files that may name a partner operation in code: its declaration, and the workflow versions that
 * run its step. The storefront's page says who each step's partner is in a shopper's words and falls
 * back to a sentence naming no one for a step it does not know.
 */
const MAY_NAME = new Set([
  "src/domain/partner-operations.ts",
  "src/domain/workflow.ts",
  "web/storefront/store.js",
]);

function codeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "bin" || name === "obj") return [];
    if (statSync(path).isDirectory()) return codeFiles(path);
    return /\.(ts|js|mjs|cs|bicep|json)$/.test(name) && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Each place in a file's code (not its comments) where an operation's name is a string or a key. */
function namings(path: string, names: ReadonlySet<string>): string[] {
  const text = readFileSync(path, "utf8");
  const where = (at: number) => `${relative(ROOT, path)}:${text.slice(0, at).split("\n").length}`;
  if (!/\.(ts|js|mjs)$/.test(path)) {
    return [...text.matchAll(/["'](\w+)["']/g)]
      .filter((m) => names.has(m[1] as string))
      .map((m) => where(m.index));
  }
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const named =
      ts.isStringLiteralLike(node) ||
      (ts.isIdentifier(node) &&
        (ts.isPropertyAssignment(node.parent) || ts.isPropertySignature(node.parent)));
    if (named && names.has(node.text)) found.push(where(node.getStart(source)));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("F26-1: one declaration per partner operation", () => {
  const names = new Set<string>(PARTNER_OPERATIONS);

  it("finds the operations' names where they are declared", () => {
    expect(namings(join(ROOT, "src/domain/partner-operations.ts"), names).length).toBeGreaterThanOrEqual(
      names.size,
    );
  });

  it("no other file lists operations or steps by name: every such list derives from the declaration", () => {
    const files = FOLDERS.flatMap((folder) => codeFiles(join(ROOT, folder)));
    const strays = files
      .filter((file) => !MAY_NAME.has(relative(ROOT, file)))
      .flatMap((file) => namings(file, names));
    expect(strays).toEqual([]);
  });
});

describe("F26-2: a declared operation's payload", () => {
  it("carries exactly the fields its declaration classes, and no field is classed two ways", () => {
    for (const declared of DECLARED_OPERATIONS) {
      const fields = Object.keys(stepPayload(sampleOrder(), declared.step)).sort();
      expect(fields, declared.step).toEqual(Object.keys(declared.payloadClasses).sort());
      for (const [field, dataClass] of Object.entries(declared.payloadClasses)) {
        expect(DATA_CLASSES).toContain(dataClass);
        expect(AGENT_PAYLOAD_FIELD_CLASSES[field], `${declared.step}.${field}`).toBe(dataClass);
      }
    }
  });
});
