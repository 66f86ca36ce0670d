/**
 * The Node.js version the deployment runs is one Azure Functions supports and one CI tests: package.json
 * `engines` names the tested majors, .ci/run runs the suite on each, and infra/main.bicep deploys one of them,
 * the newest by default.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadCompiledTemplate } from "./compiled-template.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/**
 * Node.js majors Azure Functions supports, as of this deployment's writing: 22 (to 30 April 2027) and 24 (to 30
 * April 2028); Node 20 reached end of support on 30 April 2026. Update when a major is added or retired.
 */
const AZURE_FUNCTIONS_NODE_MAJORS = ["22", "24"];

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
  const newest = [...facts.deployable].sort((a, b) => Number(b) - Number(a))[0];
  if (newest !== undefined && facts.deployedDefault !== newest)
    problems.push(
      `the deployment runs Node ${facts.deployedDefault} by default, not the newest it allows (${newest})`,
    );
  for (const version of new Set([facts.deployedDefault, ...facts.deployable])) {
    if (!facts.tested.includes(version)) problems.push(`Node ${version} is deployable but not tested`);
    if (!AZURE_FUNCTIONS_NODE_MAJORS.includes(version))
      problems.push(`Node ${version} is deployable but Azure Functions no longer supports it`);
  }
  return problems;
}

const engines = (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node;
// .ci/run installs each from npm (the machine's own Node.js is older), at a pinned version, and runs the tests
// on each: `node22_version=22.x.y`, then its PATH set to that Node.js for the first pass.
const ciRun = read(".ci/run");
const ciNodeMajors = [...ciRun.matchAll(/^node(\d+)_version=(\d+)\.\d+\.\d+$/gm)].map((m) => {
  if (m[1] !== m[2]) throw new Error(`.ci/run: node${m[1]}_version names Node ${m[2]}`);
  return m[2] ?? "";
});

describe("Node.js versions", () => {
  it("engines names exactly the majors CI runs the tests on: Node 22 and Node 24, both from npm", () => {
    expect(engineMajors(engines)).toEqual(ciNodeMajors);
    expect(ciNodeMajors).toEqual(["22", "24"]);
    for (const major of ciNodeMajors) {
      expect(ciRun, major).toMatch(new RegExp(`install_node ${major} "\\$node${major}_version"`));
      expect(ciRun, major).toMatch(new RegExp(`PATH="\\$node${major}_home/bin:\\$PATH"`));
    }
    // Nothing runs on the machine's own Node.js but the fetching of these.
    expect(ciRun).not.toMatch(/npm_config_nodedir=\/usr/);
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

  it("the check fails on the old values: Node 20 by default, 20 or 22 allowed; and on 22 by default when 24 is allowed", () => {
    expect(
      nodeVersionProblems({ deployedDefault: "20", deployable: ["20", "22"], tested: ["20", "22"] }),
    ).toEqual([
      "the deployment runs Node 20 by default, not the newest it allows (22)",
      "Node 20 is deployable but Azure Functions no longer supports it",
    ]);
    expect(
      nodeVersionProblems({ deployedDefault: "22", deployable: ["22", "24"], tested: ["22", "24"] }),
    ).toEqual(["the deployment runs Node 22 by default, not the newest it allows (24)"]);
    expect(() => engineMajors(">=20.11")).toThrow();
  });
});
