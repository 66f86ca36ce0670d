/**
 * The Node.js version the deployment runs is one Azure Functions supports and one CI tests: package.json
 * `engines` names the tested majors, .ci/run runs the suite on each, and infra/main.bicep deploys one of them:
 * by default the one Flex Consumption names its default Node.js stack (22), which Microsoft's TypeScript Flex
 * Consumption quickstart uses; 24 where the region offers it (docs/deploy.md).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { appServicePlatform, DEPLOYABLE_NODE_MAJORS } from "../../tools/native-build.js";
import { loadCompiledTemplate } from "./compiled-template.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/**
 * Node.js majors Azure Functions supports, as of this deployment's writing: 22 (to 30 April 2027) and 24 (to 30
 * April 2028); Node 20 reached end of support on 30 April 2026. Update when a major is added or retired.
 */
const AZURE_FUNCTIONS_NODE_MAJORS = ["22", "24"];

/**
 * The Node.js major Flex Consumption marks as its default stack (`isDefault` in the Functions stacks that
 * `az functionapp list-flexconsumption-runtimes` and Get-AzFunctionAppFlexConsumptionRuntime list), as of this
 * writing; 24 was not shown offered in every region the deployment allows.
 */
const FLEX_DEFAULT_NODE_MAJOR = "22";

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
  if (facts.deployedDefault !== FLEX_DEFAULT_NODE_MAJOR)
    problems.push(
      `the deployment runs Node ${facts.deployedDefault} by default, not Flex Consumption's default (${FLEX_DEFAULT_NODE_MAJOR})`,
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
    "the deployment runs a tested major that Azure Functions supports, the packages' addons built for the same",
    () => {
      const parameter = "template" in compiled ? compiled.template.parameters?.nodeVersion : undefined;
      // NODE_VERSION feeds both the Bicep and the App Service packages' native build (tools/native-build.ts).
      const file = JSON.parse(read("infra/main.parameters.json")) as {
        parameters: Record<string, { value: string }>;
      };
      expect(file.parameters.nodeVersion?.value).toBe(`\${NODE_VERSION=${FLEX_DEFAULT_NODE_MAJOR}}`);
      expect(appServicePlatform({}).nodeMajor).toBe(String(parameter?.defaultValue));
      expect([...DEPLOYABLE_NODE_MAJORS]).toEqual((parameter?.allowedValues ?? []).map(String));
      expect(
        nodeVersionProblems({
          deployedDefault: String(parameter?.defaultValue),
          deployable: (parameter?.allowedValues ?? []).map(String),
          tested: engineMajors(engines),
        }),
      ).toEqual([]);
    },
  );

  it("the check fails on the old values: Node 20 by default, 20 or 22 allowed; and on 24 by default", () => {
    expect(
      nodeVersionProblems({ deployedDefault: "20", deployable: ["20", "22"], tested: ["20", "22"] }),
    ).toEqual([
      "the deployment runs Node 20 by default, not Flex Consumption's default (22)",
      "Node 20 is deployable but Azure Functions no longer supports it",
    ]);
    expect(
      nodeVersionProblems({ deployedDefault: "24", deployable: ["22", "24"], tested: ["22", "24"] }),
    ).toEqual(["the deployment runs Node 24 by default, not Flex Consumption's default (22)"]);
    expect(() => engineMajors(">=20.11")).toThrow();
  });
});
