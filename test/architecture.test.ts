import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
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

/** The dependency rules of DESIGN.md: which layer may import which. */
const ALLOWED: Record<string, { layers: string[]; packages: RegExp }> = {
  domain: { layers: ["domain"], packages: /^zod$/ },
  ports: { layers: ["domain", "ports"], packages: /^$/ },
  state: { layers: ["domain", "ports", "state"], packages: /^$/ },
  orchestrators: { layers: ["domain", "ports", "state", "orchestrators"], packages: /^durable-functions$/ },
  agents: { layers: ["domain", "ports", "agents"], packages: /^node:/ },
  supervisor: { layers: ["domain", "ports", "state", "supervisor"], packages: /^$/ },
  scheduler: { layers: ["domain", "ports", "state", "scheduler"], packages: /^node:crypto$/ },
  config: { layers: ["domain", "config"], packages: /^$/ },
  adapters: { layers: ["domain", "ports", "adapters"], packages: /.*/ },
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
});
