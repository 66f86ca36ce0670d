/**
 * The Node.js version the deployment runs is one Azure Functions supports and one CI tests: package.json
 * `engines` names the tested majors, .ci/run runs the suite on each, and infra/main.bicep deploys one of them.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadCompiledTemplate } from "./compiled-template.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/**
 * Node.js majors Azure Functions supports, as of this deployment's writing: Node 20 reached end of support
 * on 30 April 2026. Update when a major is added or retired.
 */
const AZURE_FUNCTIONS_NODE_MAJORS = ["22"];

/** The majors an `engines.node` range of `^x.y.z` alternatives allows. */
function engineMajors(range: string): string[] {
  return range.split("||").map((part) => {
    const major = /^\s*\^(\d+)\.\d+\.\d+\s*$/.exec(part)?.[1];
    if (!major) throw new Error(`engines.node: expected ^x.y.z alternatives, got ${part.trim()}`);
    return major;
  });
}

interface NodeVersionFacts {
  readonly deployedDefault: string;
  readonly deployable: readonly string[];
  readonly tested: readonly string[];
}

function nodeVersionProblems(facts: NodeVersionFacts): string[] {
  const problems: string[] = [];
  for (const version of new Set([facts.deployedDefault, ...facts.deployable])) {
    if (!facts.tested.includes(version)) problems.push(`Node ${version} is deployable but not tested`);
    if (!AZURE_FUNCTIONS_NODE_MAJORS.includes(version))
      problems.push(`Node ${version} is deployable but Azure Functions no longer supports it`);
  }
  return problems;
}

const engines = (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node;
// The machine's Node.js (20) runs the first pass; .ci/run installs the second from npm, at a pinned version.
const ciNodeMajors = [
  "20",
  ...[...read(".ci/run").matchAll(/^node22_version=(\d+)\./gm)].map((m) => m[1] ?? ""),
];

describe("Node.js versions", () => {
  it("engines names exactly the majors CI runs the tests on: the machine's Node 20, and Node 22", () => {
    expect(engineMajors(engines)).toEqual(ciNodeMajors);
    expect(ciNodeMajors).toEqual(["20", "22"]);
  });

  const compiled = loadCompiledTemplate();
  it.skipIf("skipReason" in compiled)(
    "the deployment runs a tested major that Azure Functions supports",
    () => {
      const parameter = "template" in compiled ? compiled.template.parameters?.nodeVersion : undefined;
      expect(
        nodeVersionProblems({
          deployedDefault: String(parameter?.defaultValue),
          deployable: (parameter?.allowedValues ?? []).map(String),
          tested: engineMajors(engines),
        }),
      ).toEqual([]);
    },
  );

  it("the check fails on the old values: Node 20 by default, 20 or 22 allowed", () => {
    expect(
      nodeVersionProblems({ deployedDefault: "20", deployable: ["20", "22"], tested: ["20", "22"] }),
    ).toEqual(["Node 20 is deployable but Azure Functions no longer supports it"]);
    expect(() => engineMajors(">=20.11")).toThrow();
  });
});
