import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { newKeyRingText } from "../../laptop/embedded/key-file.js";
import {
  captureRegistrations,
  type FunctionRegistry,
  triggerOf,
} from "../../laptop/worker/registration-capture.js";
import { loadAzureSettings } from "../../src/config/azure-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import { WORKFLOWS } from "../../src/domain/workflow.js";
import { registerFunctions } from "../../src/functions/app.js";
import { createAzureApp } from "../../src/functions/azure-app.js";
import { createAzureServices } from "../../src/functions/azure-services-factory.js";

function bindingsOf(registry: FunctionRegistry): Record<string, unknown> {
  return Object.fromEntries(registry.all().map((fn) => [fn.name, fn.metadata.bindings]));
}

const ROOT = join(import.meta.dirname, "../..");
const outDir = mkdtempSync(join(ROOT, ".built-app-"));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  main: string;
  dependencies: Record<string, string>;
};

/** Every module the built entry reaches by relative imports, and every package any of them imports. */
function reachedFrom(entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file; file = pending.pop()) {
    if (modules.has(file)) continue;
    modules.add(file);
    const text = readFileSync(file, "utf8");
    const specifiers = [
      ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s*"([^"]+)"/gms),
      ...text.matchAll(/^\s*import\s*"([^"]+)"/gm),
      ...text.matchAll(/\b(?:import|require)\(\s*"([^"]+)"\s*\)/g),
    ].map((m) => m[1] as string);
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier));
      else if (!specifier.startsWith("node:")) {
        const parts = specifier.split("/");
        packages.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string));
      }
    }
  }
  return { modules: [...modules], packages: [...packages] };
}

describe("the built Azure app", () => {
  it("compiles, and its package.json entry registers every function without connecting to anything", async () => {
    execFileSync(
      process.execPath,
      [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json", "--outDir", outDir],
      {
        cwd: ROOT,
        stdio: "pipe",
      },
    );
    const main = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { main: string }).main;
    const entry = join(outDir, main.replace(/^dist\//, ""));
    const sample = {
      ...(
        JSON.parse(readFileSync(join(ROOT, "local.settings.sample.json"), "utf8")) as {
          Values: Record<string, string>;
        }
      ).Values,
      // Left empty in the sample: a key ring is a secret.
      [DATA_PROTECTION_KEYS_SETTING]: newKeyRingText(new Date()),
    };
    const saved = { ...process.env };
    Object.assign(process.env, sample);
    try {
      const registry = await captureRegistrations(() => import(pathToFileURL(entry).href));
      // The built entry registers exactly what the source registers (checked in detail in azure-app.test.ts).
      const fromSource = await captureRegistrations(() =>
        registerFunctions(createAzureApp(createAzureServices(loadAzureSettings(sample)))),
      );
      expect(bindingsOf(registry)).toEqual(bindingsOf(fromSource));
      const triggers = registry.all().map((fn) => triggerOf(fn)?.type);
      expect(triggers.filter((t) => t === "serviceBusTrigger")).toHaveLength(3);
      expect(triggers.filter((t) => t === "timerTrigger")).toHaveLength(3);
      expect(triggers.filter((t) => t === "httpTrigger")).toHaveLength(12);
      expect(triggers.filter((t) => t === "orchestrationTrigger")).toHaveLength(WORKFLOWS.length);
    } finally {
      for (const key of Object.keys(sample)) if (!(key in saved)) delete process.env[key];
    }
  }, 120_000);

  it("reaches only its own modules and its runtime dependencies: nothing of laptop/, no devDependency", () => {
    const entry = join(outDir, PACKAGE.main.replace(/^dist\//, ""));
    expect(existsSync(entry), "the first test builds the app").toBe(true);
    const { modules, packages } = reachedFrom(entry);
    expect(modules.length).toBeGreaterThan(50);
    expect(modules.map((m) => relative(outDir, m)).filter((m) => m.startsWith(".."))).toEqual([]);
    expect(modules.filter((m) => !existsSync(m))).toEqual([]);
    const runtime = new Set(Object.keys(PACKAGE.dependencies));
    expect(packages.filter((name) => !runtime.has(name))).toEqual([]);
  });
});
