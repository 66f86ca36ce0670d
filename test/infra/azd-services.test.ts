/**
 * How azd builds the three services (azure.yaml). azd packages services in parallel, and for a Node.js service
 * whose folder has a package.json it runs `npm install` (unless node_modules/.package-lock.json is at least as
 * new as package-lock.json) and `npm run build --if-present` in that folder. When all three services were the
 * project folder, three installs and three compilers ran there at once. Now one project-level step installs and
 * builds (infra/scripts/prepackage.sh, run here with stand-ins for npm and npx), and each service is a folder of
 * its own that it writes, with nothing left for azd to install or build.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_DIRS, packageInputsDigest, packagesUpToDate } from "../../tools/azd-packages.js";
import { azdServices } from "./azd-project.js";

const root = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const yaml = read("azure.yaml");

/** The hooks a block of azure.yaml declares: `  prepackage:` under the top-level `hooks:`, or under a service. */
function hooksIn(text: string, indent: number): string[] {
  return [...text.matchAll(new RegExp(`^ {${indent}}(pre|post)(\\w+):\\s*$`, "gm"))].map(
    (m) => `${m[1]}${m[2]}`,
  );
}
const servicesBlock = yaml.slice(yaml.indexOf("\nservices:"), yaml.indexOf("\nhooks:"));
const projectHooks = yaml.slice(yaml.indexOf("\nhooks:"));

describe("F25-1: azd builds nothing in the project folder, and nothing twice at once", () => {
  const services = azdServices(yaml);

  it("each service is a folder of its own that the one step writes, with no build or hook of its own", () => {
    expect(services.map((s) => s.properties.project)).toEqual(PACKAGE_DIRS);
    expect(new Set(services.map((s) => s.properties.project)).size).toBe(services.length);
    for (const service of services) {
      expect(service.properties.project, service.name).not.toBe(".");
      expect(service.properties.dist, service.name).toBeUndefined();
    }
    // A service hook would run once per service, in parallel: none has one.
    expect(hooksIn(servicesBlock, 6)).toEqual([]);
    expect(servicesBlock).not.toMatch(/^ {4}hooks:/m);
  });

  it("one project-level step installs and builds, before packaging and again (a no-op if fresh) before a deploy", () => {
    expect(hooksIn(projectHooks, 2)).toEqual(["prepackage", "predeploy", "preprovision", "postprovision"]);
    const runs = [
      ...projectHooks.matchAll(/^ {2}(prepackage|predeploy):\s*\n(?: {4}.*\n)*? {4}run: (\S+)$/gm),
    ];
    expect(runs.map((m) => [m[1], m[2]])).toEqual([
      ["prepackage", "./infra/scripts/prepackage.sh"],
      ["predeploy", "./infra/scripts/prepackage.sh"],
    ]);
  });
});

describe("infra/scripts/prepackage.sh", () => {
  const bin = mkdtempSync(join(tmpdir(), "prepackage-"));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  // npm and npx record their arguments; `npx ... --check` answers as $STUB_FRESH says.
  for (const tool of ["npm", "npx"]) {
    writeFileSync(
      join(bin, tool),
      `#!/bin/sh\necho "${tool} $*" >> "$STUB_LOG"\ncase "$*" in *--check*) exit "\${STUB_FRESH:-1}" ;; esac\n`,
    );
    chmodSync(join(bin, tool), 0o755);
  }

  function run(fresh: boolean) {
    const log = join(mkdtempSync(join(bin, "run-")), "calls.log");
    writeFileSync(log, "");
    const result = spawnSync("sh", [join(root, "infra/scripts/prepackage.sh")], {
      encoding: "utf8",
      env: {
        PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
        STUB_LOG: log,
        STUB_FRESH: fresh ? "0" : "1",
      },
    });
    return { ...result, calls: readFileSync(log, "utf8").split("\n").filter(Boolean) };
  }

  it("F25-1: installs once, then runs the three builds one after another, then writes the three packages", () => {
    const result = run(false);
    expect(result.status).toBe(0);
    expect(result.calls).toEqual([
      "npx --no-install tsx tools/azd-packages.ts --check",
      "npm ci --no-audit --no-fund",
      "npm run build",
      "npm run build:storefront",
      "npm run build:partner",
      "npx --no-install tsx tools/azd-packages.ts",
    ]);
  });

  it("F25-4: the storefront's and the partner's builds (their type checks) are part of it", () => {
    const calls = run(false).calls;
    expect(calls).toContain("npm run build:storefront");
    expect(calls).toContain("npm run build:partner");
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
    expect([scripts["build:storefront"], scripts["build:partner"]]).toEqual([
      "tsc -p tsconfig.storefront.json",
      "tsc -p tsconfig.partner.json",
    ]);
    // The postbuild hooks azd never ran under `azd up` are gone.
    expect(yaml).not.toMatch(/postbuild:/);
  });

  it("F25-1: is idempotent: with the packages made from these inputs, it installs and builds nothing", () => {
    const result = run(true);
    expect(result.status).toBe(0);
    expect(result.calls).toEqual(["npx --no-install tsx tools/azd-packages.ts --check"]);
  });
});

describe("F25-1: the record of what the packages were made from", () => {
  it("is the same for the same inputs, and changes with the durable backend and the Node.js major", () => {
    const base = packageInputsDigest(root, {});
    expect(packageInputsDigest(root, { DURABLE_BACKEND: "azureStorage", NODE_VERSION: "22" })).toBe(base);
    expect(packageInputsDigest(root, { DURABLE_BACKEND: "dts" })).not.toBe(base);
    expect(packageInputsDigest(root, { NODE_VERSION: "24" })).not.toBe(base);
  });

  it("calls packages missing or unrecorded stale", () => {
    const empty = mkdtempSync(join(tmpdir(), "no-packages-"));
    try {
      expect(packagesUpToDate(empty, {})).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
