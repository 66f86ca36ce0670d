/**
 * A package with a native addon (better-sqlite3, the storefront's order book), carried in an App Service package
 * built for App Service's Linux x64 and the deployment's Node.js major rather than for the machine that made the
 * package. When that machine is the same kind, the addon npm built here is the one; otherwise the package's own
 * prebuild-install fetches the addon prebuilt for the target (it needs the network, as `npm ci` did).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

export interface NodePlatform {
  readonly platform: string;
  readonly arch: string;
  /** The Node.js major version: its addons' ABI. */
  readonly nodeMajor: string;
}

/** The Node.js majors the deployment allows (infra/main.bicep `nodeVersion`), its default first. */
export const DEPLOYABLE_NODE_MAJORS = ["22", "24"] as const;

/** App Service for Linux, with the deployment's Node.js major (NODE_VERSION, as infra/main.parameters.json). */
export function appServicePlatform(env: Readonly<Record<string, string | undefined>>): NodePlatform {
  const value = env.NODE_VERSION?.trim() || DEPLOYABLE_NODE_MAJORS[0];
  if (!(DEPLOYABLE_NODE_MAJORS as readonly string[]).includes(value))
    throw new Error(
      `NODE_VERSION: expected ${DEPLOYABLE_NODE_MAJORS.join(" or ")}, got ${JSON.stringify(value)}`,
    );
  return { platform: "linux", arch: "x64", nodeMajor: value };
}

/** The machine making the package, as npm installed the addons on it. */
export function thisPlatform(): NodePlatform {
  return {
    platform: process.platform,
    arch: process.arch,
    nodeMajor: process.versions.node.split(".")[0] ?? "",
  };
}

/** `copy`: the addon built here runs there; `fetch`: it does not, so the target's prebuilt one is fetched. */
export function nativeBuildPlan(here: NodePlatform, target: NodePlatform): "copy" | "fetch" {
  const same =
    here.platform === target.platform && here.arch === target.arch && here.nodeMajor === target.nodeMajor;
  return same ? "copy" : "fetch";
}

/**
 * Leaves in an installed addon package only what loads at run time: its JavaScript and `build/Release/*.node`,
 * not the sources, the object files and the bundled SQLite it was compiled from.
 */
export function pruneAddonBuild(packageDir: string): void {
  for (const folder of ["deps", "src"]) rmSync(join(packageDir, folder), { recursive: true, force: true });
  const release = join(packageDir, "build", "Release");
  if (!existsSync(release)) return;
  for (const name of readdirSync(release))
    if (!name.endsWith(".node")) rmSync(join(release, name), { recursive: true, force: true });
  for (const name of readdirSync(join(packageDir, "build")))
    if (name !== "Release") rmSync(join(packageDir, "build", name), { recursive: true, force: true });
}

/** Replaces the addon in `packageDir` (inside the package, whose node_modules holds prebuild-install) by the target's. */
export function fetchPrebuiltAddon(packageDir: string, packageRoot: string, target: NodePlatform): void {
  rmSync(join(packageDir, "build"), { recursive: true, force: true });
  const bin = join(packageRoot, "node_modules", "prebuild-install", "bin.js");
  execFileSync(
    process.execPath,
    [
      bin,
      "--platform",
      target.platform,
      "--arch",
      target.arch,
      "--runtime",
      "node",
      "--target",
      `${target.nodeMajor}.0.0`,
    ],
    { cwd: packageDir, stdio: "inherit" },
  );
}
