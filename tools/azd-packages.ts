/**
 * The packages azd deploys, all three written by one step (infra/scripts/prepackage.sh, azure.yaml's project-level
 * `prepackage` and `predeploy` hooks) after one `npm ci` and the three builds: the Function App's
 * (.build/function-app), the storefront's and the partner's (.build/storefront, .build/partner). azure.yaml's
 * services only pick these folders up: none builds or installs anything in the project folder, so nothing runs
 * there twice at once, however many services azd packages in parallel.
 *
 * The step records a digest of everything the packages are made from (the sources, the lockfile, the build
 * settings, DURABLE_BACKEND and NODE_VERSION, this machine's platform) beside them; `--check` answers whether the
 * packages on disk were made from what is here now, so a second run (the `predeploy` hook after `prepackage`
 * within one `azd up`) keeps them instead of making them again.
 *
 *   tsx tools/azd-packages.ts            (after npm ci and the builds)
 *   tsx tools/azd-packages.ts --check    (exit 0: up to date; 1: make them)
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  durableBackendOf,
  FUNCTION_APP_PACKAGE_DIR,
  writeFunctionAppPackage,
} from "./function-app-package.js";
import { appServicePlatform, thisPlatform } from "./native-build.js";
import { WEB_APPS, webAppPackageDir, writeWebAppPackage } from "./web-app-package.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The package folders, relative to the project, as azure.yaml's services name them. */
export const PACKAGE_DIRS = [FUNCTION_APP_PACKAGE_DIR, ...WEB_APPS.map(webAppPackageDir)];

/** Where the digest of the inputs the packages were made from is kept. */
export const PACKAGES_DIGEST = join(".build", "packages.sha256");

/** Folders and files the packages are made from; tests, the laptop's code and the docs are not among them. */
const INPUT_FOLDERS = ["src", "storefront", "partner", "web", "tools"];
const INPUT_FILES = [
  "package.json",
  "package-lock.json",
  "host.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "tsconfig.storefront.json",
  "tsconfig.partner.json",
];

function filesUnder(root: string, folder: string): string[] {
  const dir = join(root, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(folder, name);
    if (name === "node_modules" || name.startsWith(".")) return [];
    return statSync(join(root, path)).isDirectory() ? filesUnder(root, path) : [path];
  });
}

/** A digest of everything the packages are made from, for the settings `env` gives. */
export function packageInputsDigest(root: string, env: Readonly<Record<string, string | undefined>>): string {
  const hash = createHash("sha256");
  const settings = {
    durableBackend: durableBackendOf(env),
    target: appServicePlatform(env),
    here: thisPlatform(),
  };
  hash.update(`${JSON.stringify(settings)}\0`);
  const files = [...INPUT_FILES, ...INPUT_FOLDERS.flatMap((folder) => filesUnder(root, folder))].sort();
  for (const file of files) {
    if (!existsSync(join(root, file))) continue;
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** Whether the packages on disk were made from what `root` holds now, with these settings. */
export function packagesUpToDate(root: string, env: Readonly<Record<string, string | undefined>>): boolean {
  const recorded = join(root, PACKAGES_DIGEST);
  if (!existsSync(recorded) || !PACKAGE_DIRS.every((dir) => existsSync(join(root, dir, "package.json"))))
    return false;
  return readFileSync(recorded, "utf8").trim() === packageInputsDigest(root, env);
}

/**
 * Writes the three packages under `root`'s .build/ from its dist/ and node_modules, then the digest of their
 * inputs (last, so that a step stopped half-way leaves none and the next run makes them all again).
 */
export function writeAzdPackages(root: string, env: Readonly<Record<string, string | undefined>>): void {
  const backend = durableBackendOf(env);
  const target = appServicePlatform(env);
  const digest = packageInputsDigest(root, env);
  writeFunctionAppPackage(join(root, FUNCTION_APP_PACKAGE_DIR), root, join(root, "dist"), backend);
  for (const app of WEB_APPS) writeWebAppPackage(app, join(root, webAppPackageDir(app)), target, { root });
  mkdirSync(join(root, ".build"), { recursive: true });
  writeFileSync(join(root, PACKAGES_DIGEST), `${digest}\n`);
}

function main(): void {
  const { values } = parseArgs({ options: { check: { type: "boolean", default: false } } });
  if (values.check) {
    const fresh = packagesUpToDate(ROOT, process.env);
    console.log(
      fresh
        ? "azd-packages: the packages in .build/ were made from these sources and settings; kept"
        : "azd-packages: the packages in .build/ are missing or older than the sources; making them",
    );
    process.exit(fresh ? 0 : 1);
  }
  writeAzdPackages(ROOT, process.env);
  for (const dir of PACKAGE_DIRS)
    console.log(`azd-packages: wrote ${relative(process.cwd(), join(ROOT, dir))}`);
}

if (process.argv[1]?.endsWith("azd-packages.ts")) main();
