/**
 * The Function App's deployment package (tools/function-app-package.ts): the modules the entry point reaches,
 * host.json, the dashboard's files, and only the runtime packages those modules import with what they depend on,
 * as package-lock.json records them. No devDependency, no laptop-only package (better-sqlite3: `sas host` hands
 * the app its SQLite orders table), nothing that needs a build on the machine that installs it. azd zips that
 * folder and Azure runs it as built (azure.yaml: the `api` service's project, `remoteBuild: false`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { newKeyRingText } from "../../laptop/embedded/key-file.js";
import { DASHBOARD_FILES } from "../../src/adapters/web/web-assets.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import {
  FUNCTION_APP_PACKAGE_DIR,
  functionAppPackage,
  LAPTOP_ONLY_PACKAGES,
  NOT_LOADED,
  runtimeImports,
  SCHEDULER_CONNECTION_SETTING,
  writeFunctionAppPackage,
} from "../../tools/function-app-package.js";
import { azdServices } from "./azd-project.js";

const root = join(import.meta.dirname, "../..");
const readText = (path: string) => readFileSync(join(root, path), "utf8");
const project = JSON.parse(readText("package.json")) as {
  main: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const made = functionAppPackage(root);
const under = (folder: string) => made.files.filter((file) => file.startsWith(`${folder}/`));
const packageNames = made.modules.map((path) => path.slice(path.lastIndexOf("node_modules/") + 13));

describe("the Function App's package", () => {
  it("can be made: every import is a runtime dependency, every package portable", () => {
    expect(made.problems).toEqual([]);
  });

  it("holds the app as built, host.json and the dashboard, and nothing of the laptop, the tests or the other apps", () => {
    expect(made.files).toEqual(
      expect.arrayContaining([
        "host.json",
        "package.json",
        "package-lock.json",
        project.main,
        `${project.main}.map`,
        ...DASHBOARD_FILES.map((file) => `web/dashboard/${file}`),
      ]),
    );
    expect(made.files.filter((file) => !/^(dist|web\/dashboard)\//.test(file))).toEqual([
      "host.json",
      "package-lock.json",
      "package.json",
    ]);
    for (const folder of ["dist/storefront", "dist/partner", "dist/adapters/sqlite", "laptop", "test", "src"])
      expect(under(folder), folder).toEqual([]);
    expect(made.files.filter((file) => /\.ts$|tsconfig|\.funcignore|local\.settings/.test(file))).toEqual([]);
  });

  it("names only runtime dependencies, at the project's versions, and runs the project's entry point", () => {
    const names = Object.keys(made.dependencies);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(made.dependencies[name], name).toBe(project.dependencies[name]);
    expect(names.filter((name) => name in project.devDependencies)).toEqual([]);
    expect(made.packageJson).toMatchObject({ main: project.main, type: "module" });
    expect(made.packageJson).not.toHaveProperty("devDependencies");
    expect(made.packageJson).not.toHaveProperty("scripts");
  });

  it("carries no laptop-only package and no devDependency-only package in node_modules", () => {
    expect(packageNames.filter((name) => LAPTOP_ONLY_PACKAGES.includes(name))).toEqual([]);
    expect(made.modules.filter((path) => made.lockfile.packages[path]?.dev === true)).toEqual([]);
    // The test tools and stand-ins, which no runtime package needs.
    for (const tool of [
      "vitest",
      "azurite",
      "playwright-core",
      "@vercel/cosmosdb-server",
      "typescript",
      "tsx",
    ])
      expect(packageNames, tool).not.toContain(tool);
    expect(Object.keys(made.lockfile.packages).sort()).toEqual(["", ...made.modules].sort());
  });
});

describe("the package's checks fail on", () => {
  /** A project of its own: package.json, package-lock.json and the sources given. */
  function projectWith(sources: Record<string, string>, lockExtra: Record<string, unknown> = {}) {
    const dir = mkdtempSync(join(tmpdir(), "function-package-"));
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({
        name: "p",
        version: "1.0.0",
        type: "module",
        main: "dist/functions/index.js",
        dependencies: { zod: "4.0.0", "better-sqlite3": "12.0.0", native: "1.0.0" },
        devDependencies: { vitest: "4.0.0" },
        allowScripts: { "better-sqlite3": true, native: true },
      }),
    );
    writeFileSync(
      join(dir, "package-lock.json"),
      JSON.stringify({
        lockfileVersion: 3,
        packages: {
          "": {},
          "node_modules/zod": { version: "4.0.0" },
          "node_modules/better-sqlite3": { version: "12.0.0", hasInstallScript: true },
          "node_modules/native": { version: "1.0.0", hasInstallScript: true, os: ["linux"] },
          "node_modules/vitest": { version: "4.0.0", dev: true },
          ...lockExtra,
        },
      }),
    );
    for (const [path, text] of Object.entries(sources)) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  }
  const made = (sources: Record<string, string>, lockExtra?: Record<string, unknown>) => {
    const dir = projectWith(sources, lockExtra);
    try {
      return functionAppPackage(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("a devDependency, a laptop-only package, a package that builds on install, an import outside src/", () => {
    const result = made({
      "src/functions/index.ts": `import "./app.js";\nimport { z } from "zod";\nexport const s = z.string();`,
      "src/functions/app.ts": `import { it } from "vitest";\nimport "native";\nimport "../../laptop/x.js";\nexport const db = () => import("better-sqlite3");\nit;`,
    });
    expect(result.problems).toEqual([
      "src/functions/app.ts imports ../../laptop/x.js, outside src/, which the package does not carry",
      "src/functions/app.ts imports better-sqlite3, a laptop-only package",
      "src/functions/app.ts imports vitest, a devDependency",
      "node_modules/native: runs an install script (a build for the machine that installs it)",
      "node_modules/native: built for one platform (os/cpu)",
    ]);
  });

  it("a runtime package that pulls in a laptop-only or devDependency-only one", () => {
    const result = made(
      { "src/functions/index.ts": `import "zod";` },
      {
        "node_modules/zod": { version: "4.0.0", dependencies: { "better-sqlite3": "^12", vitest: "^4" } },
      },
    );
    expect(result.problems).toEqual([
      "node_modules/better-sqlite3: laptop-only, not for the Function App",
      "node_modules/better-sqlite3: runs an install script (a build for the machine that installs it)",
      "node_modules/vitest: a devDependency",
    ]);
  });

  it("reads the imports a module keeps at run time: not type-only ones, dynamic ones too", () => {
    expect(
      runtimeImports(
        `import type { A } from "a";\nimport { type B } from "b";\nexport type { C } from "c";\nexport { d } from "d";\nconst e = await import("e");\nimport "f";`,
      ),
    ).toEqual(["b", "d", "e", "f"]);
  });
});

describe("azure.yaml's Function App service", () => {
  const api = azdServices(readText("azure.yaml")).find((service) => service.name === "api");

  it("deploys the package folder as built, which the project-level step writes (./azd-services.test.ts)", () => {
    expect(api?.properties).toMatchObject({ project: FUNCTION_APP_PACKAGE_DIR, remoteBuild: "false" });
    // azd refuses `remoteBuild: false` when the service's .funcignore leaves node_modules out; there is none.
    expect(existsSync(join(root, ".funcignore"))).toBe(false);
    expect(readText("azure.yaml")).toMatch(/requiredVersions:\s*\n\s+azd: ">= 1\.23\.12"/);
  });
});

describe("the written package", () => {
  const work = mkdtempSync(join(tmpdir(), "function-package-written-"));
  // Some 25,000 files: more than the default hook time to remove.
  afterAll(() => rmSync(work, { recursive: true, force: true }), 120_000);

  it("loads on its own: every module the app imports resolves inside it", { timeout: 120_000 }, () => {
    const built = join(work, "built");
    execFileSync(
      process.execPath,
      [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json", "--outDir", built],
      { cwd: root, stdio: "pipe" },
    );
    // Outside the project, so that Node.js finds no package in the project's own node_modules.
    const out = join(work, "package");
    writeFunctionAppPackage(out, root, built);
    // npm's record of the tree, newer than the lockfile: azd finds nothing to install.
    expect(statSync(join(out, "node_modules", ".package-lock.json")).mtimeMs).toBeGreaterThanOrEqual(
      statSync(join(out, "package-lock.json")).mtimeMs,
    );
    expect(JSON.parse(readFileSync(join(out, "package.json"), "utf8"))).not.toHaveProperty("scripts");
    // F25-2: host.json names the backend DURABLE_BACKEND chose; with azureStorage, the extension's default.
    const provider = (dir: string) =>
      (
        JSON.parse(readFileSync(join(dir, "host.json"), "utf8")) as {
          extensions: { durableTask: { storageProvider?: unknown } };
        }
      ).extensions.durableTask.storageProvider;
    expect(provider(out)).toBeUndefined();
    const dts = join(work, "package-dts");
    writeFunctionAppPackage(dts, root, built, "dts");
    expect(provider(dts)).toEqual({
      type: "azureManaged",
      connectionStringName: SCHEDULER_CONNECTION_SETTING,
    });
    expect(readdirSync(join(out, "node_modules", "@azure"))).toContain("functions");
    expect(existsSync(join(out, "node_modules", "better-sqlite3"))).toBe(false);
    // Type declarations and source maps are no part of what runs.
    const zod = readdirSync(join(out, "node_modules", "zod"), { recursive: true }).map(String);
    expect(zod.filter((file) => NOT_LOADED.test(file))).toEqual([]);
    expect(zod.some((file) => file.endsWith(".js"))).toBe(true);
    // The entry point loads from the package alone and registers the app, with settings as the Bicep gives them.
    const settings = {
      ServiceBusConnection__fullyQualifiedNamespace: "sb-orders.servicebus.example",
      CosmosDb__endpoint: "https://cosmos-orders.example/",
      OrdersSql__server: "sql-orders.example",
      OrdersSql__database: "orders",
      AzureWebJobsStorage__blobServiceUri: "https://storders.blob.example/",
      PARTNER_URL: "https://partner.example",
      [DATA_PROTECTION_KEYS_SETTING]: newKeyRingText(new Date()),
    };
    const load = (env: Record<string, string>) =>
      spawnSync(
        process.execPath,
        ["--input-type=module", "-e", `await import("./${project.main}"); console.log("loaded")`],
        { cwd: out, encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env }, timeout: 60_000 },
      );
    const loaded = load(settings);
    expect(loaded.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    expect([loaded.status, loaded.stdout.trim()]).toEqual([0, "loaded"]);
    // Without them it stops with the settings error, naming them.
    expect(load({}).stderr).toMatch(/Service Bus connection: set ServiceBusConnection/);
  });
});
