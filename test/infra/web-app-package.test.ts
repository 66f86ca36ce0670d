/**
 * F25-6: the storefront's and the partner's packages (tools/web-app-package.ts), built here and run by App Service
 * as they are, instead of sources that App Service installed with every devDependency and compiled again. Each
 * carries its compiled modules, its page, and only its runtime packages, better-sqlite3 built for App Service's
 * Linux x64 and the deployment's Node.js major; writing one twice gives the same package.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  appServicePlatform,
  type NodePlatform,
  nativeBuildPlan,
  thisPlatform,
} from "../../tools/native-build.js";
import { WEBAPPIGNORE, webAppPackage, writeWebAppPackage } from "../../tools/web-app-package.js";

const root = join(import.meta.dirname, "../..");

describe("F25-6: the App Service apps' packages, as listed", () => {
  for (const app of ["storefront", "partner"] as const) {
    const made = webAppPackage(app, root);

    it(`${app}: can be made, with only runtime dependencies, better-sqlite3 among them built for the target`, () => {
      expect(made.problems).toEqual([]);
      expect(Object.keys(made.dependencies)).toContain("better-sqlite3");
      // None that only our devDependencies lead to (rhea, say, is also one, but @azure/service-bus needs it).
      expect(made.modules.filter((path) => made.lockfile.packages[path]?.dev === true)).toEqual([]);
      const names = made.modules.map((path) => path.slice(path.lastIndexOf("node_modules/") + 13));
      for (const tool of ["typescript", "vitest", "tsx", "azurite", "@biomejs/biome"])
        expect(names).not.toContain(tool);
      expect(made.packageJson).not.toHaveProperty("scripts");
      expect(made.files.filter((file) => /\.ts$|tsconfig/.test(file))).toEqual([]);
    });
  }

  it("builds the addon for App Service's Linux x64 and NODE_VERSION: copied when made on the same, fetched otherwise", () => {
    const target = appServicePlatform({});
    expect(target).toEqual({ platform: "linux", arch: "x64", nodeMajor: "22" });
    expect(appServicePlatform({ NODE_VERSION: "24" }).nodeMajor).toBe("24");
    expect(() => appServicePlatform({ NODE_VERSION: "20" })).toThrow(/NODE_VERSION: expected 22 or 24/);
    const here = (platform: string, arch: string, nodeMajor: string): NodePlatform => ({
      platform,
      arch,
      nodeMajor,
    });
    expect(nativeBuildPlan(here("linux", "x64", "22"), target)).toBe("copy");
    expect(nativeBuildPlan(here("darwin", "arm64", "22"), target)).toBe("fetch");
    expect(nativeBuildPlan(here("linux", "x64", "24"), target)).toBe("fetch");
  });
});

describe("F25-6: the storefront's package, written", () => {
  const work = mkdtempSync(join(tmpdir(), "web-app-package-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }), 60_000);
  const listing = (dir: string): string[] =>
    readdirSync(dir, { recursive: true })
      .map(String)
      .filter((path) => !statSync(join(dir, path)).isDirectory())
      .sort();

  it("runs from its own folder, holds nothing to install or build, and is the same when written again", {
    timeout: 180_000,
  }, () => {
    const built = join(work, "built");
    execFileSync(
      process.execPath,
      [
        join(root, "node_modules/typescript/bin/tsc"),
        "-p",
        "tsconfig.storefront.json",
        "--outDir",
        join(built, "storefront"),
      ],
      { cwd: root, stdio: "pipe" },
    );
    // Made on a machine of the target's kind, so the addon npm built here is the one carried.
    const here = thisPlatform();
    const out = join(work, "storefront");
    writeWebAppPackage("storefront", out, here, { root, built, here });
    const first = listing(out);
    const packageJson = readFileSync(join(out, "package.json"), "utf8");
    writeWebAppPackage("storefront", out, here, { root, built, here });
    expect(listing(out)).toEqual(first);
    expect(readFileSync(join(out, "package.json"), "utf8")).toBe(packageJson);

    // azd's npm steps find nothing to do: no build script, npm's record of the tree newer than the lockfile.
    expect(JSON.parse(packageJson)).not.toHaveProperty("scripts");
    const hidden = statSync(join(out, "node_modules", ".package-lock.json")).mtimeMs;
    expect(hidden).toBeGreaterThanOrEqual(statSync(join(out, "package-lock.json")).mtimeMs);
    // azd keeps node_modules in an App Service package only when the folder has an ignore file.
    expect(readFileSync(join(out, ".webappignore"), "utf8")).toBe(WEBAPPIGNORE);
    expect(WEBAPPIGNORE.split("\n").filter((line) => line.trim() && !line.startsWith("#"))).toEqual([]);

    // The addon's binary only, not the sources and objects it was compiled from.
    const addon = join(out, "node_modules", "better-sqlite3");
    expect(existsSync(join(addon, "build", "Release", "better_sqlite3.node"))).toBe(true);
    for (const gone of ["deps", "src", join("build", "Release", "obj.target")])
      expect(existsSync(join(addon, gone)), gone).toBe(false);
    for (const tool of ["typescript", "vitest", "azurite", "@biomejs/biome"])
      expect(existsSync(join(out, "node_modules", tool)), tool).toBe(false);

    // The start command's module loads from the package alone, the order book's SQLite driver with it.
    const loaded = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `await import("./dist/storefront/storefront/main.js"); await import("better-sqlite3"); console.log("loaded")`,
      ],
      { cwd: out, encoding: "utf8", env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
    );
    expect(loaded.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    expect([loaded.status, loaded.stdout.trim()]).toEqual([0, "loaded"]);
  });
});
