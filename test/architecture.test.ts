import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

function importsOf(path: string): string[] {
  const text = readFileSync(path, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1] as string);
}

function layerOf(path: string): string {
  return relative(join(ROOT, "src"), path).split("/")[0] ?? "";
}

/** The dependency rule (docs/architecture.md): which layer may import which. */
const ALLOWED: Record<string, { layers: string[]; packages: RegExp }> = {
  domain: { layers: ["domain"], packages: /^zod$/ },
  ports: { layers: ["domain", "ports"], packages: /^$/ },
  state: { layers: ["domain", "ports", "state"], packages: /^$/ },
  telemetry: { layers: ["domain", "ports", "telemetry"], packages: /^@opentelemetry\/api$/ },
  orchestrators: {
    layers: ["domain", "ports", "state", "telemetry", "orchestrators"],
    packages: /^(durable-functions|zod)$/,
  },
  agents: { layers: ["domain", "ports", "telemetry", "agents"], packages: /^node:/ },
  supervisor: { layers: ["domain", "ports", "state", "telemetry", "supervisor"], packages: /^$/ },
  scheduler: {
    layers: ["domain", "ports", "state", "telemetry", "scheduler"],
    packages: /^node:crypto$/,
  },
  config: { layers: ["domain", "config"], packages: /^$/ },
  adapters: { layers: ["domain", "ports", "telemetry", "adapters"], packages: /.*/ },
};

describe("architecture", () => {
  const files = sourceFiles(join(ROOT, "src"));

  it("finds the source tree", () => {
    expect(files.some((f) => layerOf(f) === "domain")).toBe(true);
  });

  for (const file of files) {
    const layer = layerOf(file);
    const rule = ALLOWED[layer];
    if (!rule) continue;
    it(`${relative(ROOT, file)} imports only what the ${layer} layer may`, () => {
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith(".")) {
          const target = layerOf(join(file, "..", specifier));
          expect(rule.layers, `${specifier} reaches into ${target}`).toContain(target);
        } else {
          expect(specifier, `package ${specifier} in the ${layer} layer`).toMatch(rule.packages);
        }
      }
    });
  }

  it("orchestrator code makes no telemetry: its spans would repeat on every replay", () => {
    const orchestratorFiles = files.filter(
      (f) => layerOf(f) === "orchestrators" && !f.includes(`${join("orchestrators", "activities")}`),
    );
    expect(orchestratorFiles.map((f) => relative(ROOT, f))).toContain(
      "src/orchestrators/order-processing.ts",
    );
    for (const file of orchestratorFiles) {
      for (const specifier of importsOf(file)) {
        expect(specifier, relative(ROOT, file)).not.toMatch(/telemetry|@opentelemetry/);
      }
    }
  });

  describe("only the composition roots construct adapters", () => {
    const ROOTS = ["functions", "local"];
    const adapterFiles = files.filter((f) => layerOf(f) === "adapters");
    const adapters = adapterFiles.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/^export (?:class|function|async function) (\w+)/gm)]
        .map((m) => m[1] as string)
        .filter((name) => /^[A-Z]|^(create|open|start)[A-Z]/.test(name))
        .map((name) => ({ name, file })),
    );

    it("finds the adapters' constructors and factories", () => {
      expect(adapters.map((a) => a.name)).toEqual(
        expect.arrayContaining([
          "SqliteStateStore",
          "CosmosStateStore",
          "createServiceBusClient",
          "openSqlPool",
        ]),
      );
    });

    for (const file of files.filter((f) => !ROOTS.includes(layerOf(f)))) {
      it(`${relative(ROOT, file)} constructs no adapter`, () => {
        const text = readFileSync(file, "utf8");
        for (const adapter of adapters) {
          // An adapter's own parts, in its technology's folder, are built by that adapter.
          if (dirname(adapter.file) === dirname(file)) continue;
          const call = new RegExp(`(?:new\\s+${adapter.name}\\b|\\b${adapter.name}\\s*\\()`);
          expect(text, `${adapter.name} (${relative(ROOT, adapter.file)})`).not.toMatch(call);
        }
      });
    }
  });

  describe("functions stay short where the workflow is decided", () => {
    const MAX_LINES = 80;
    for (const file of files.filter((f) =>
      ["orchestrators", "functions", "scheduler"].includes(layerOf(f)),
    )) {
      it(`${relative(ROOT, file)} has no function longer than ${MAX_LINES} lines`, () => {
        expect(longFunctions(file, MAX_LINES)).toEqual([]);
      });
    }
  });
});

/** Every function, method or arrow function in the file that spans more than `maxLines` lines. */
function longFunctions(path: string, maxLines: number): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > maxLines) found.push(`line ${first + 1}: ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
