/**
 * The Function App's deployment package (./app-package.ts): the compiled modules its entry point (`package.json`
 * `main`) reaches, host.json for the durable backend chosen, the dashboard's files the operator API serves, and
 * only the runtime packages those modules import. azd deploys the folder this writes as it is (azure.yaml: the
 * `api` service's project, `remoteBuild: false`); `test/infra/function-package.test.ts` reads the same listing.
 *
 * host.json names the durable storage provider in the package rather than through app settings: the scale
 * controller of Flex Consumption reads host.json, not `AzureFunctionsJobHost__...` settings, when it decides
 * what to watch (Azure/azure-functions-durable-extension#2622). DURABLE_BACKEND, read from the azd environment
 * when the package is made, picks it; the Bicep reads the same variable (infra/main.parameters.json).
 *
 *   tsx tools/function-app-package.ts [--out .build/function-app]   (after `npm run build`)
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DASHBOARD_FILES } from "../src/adapters/web/web-assets.js";
import {
  type AppPackage,
  type AppPackageSpec,
  appPackage,
  type PackageJson,
  writeAppPackage,
} from "./app-package.js";

export {
  dependencyClosure,
  moduleProblems,
  NOT_LOADED,
  packageName,
  reachedSources,
  runtimeImports,
} from "./app-package.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where `azure.yaml` has azd take the Function App's package from. */
export const FUNCTION_APP_PACKAGE_DIR = join(".build", "function-app");

/**
 * Runtime dependencies of the project that only the laptop's hosts and the App Service apps use: the Function
 * App's package must never carry them, whatever it imports.
 */
export const LAPTOP_ONLY_PACKAGES: readonly string[] = ["better-sqlite3"];

/** The values of DURABLE_BACKEND, the default first (as infra/main.bicep's `durableBackend`). */
export const DURABLE_BACKENDS = ["azureStorage", "dts"] as const;
export type DurableBackend = (typeof DURABLE_BACKENDS)[number];

/** The app setting holding the Durable Task Scheduler's connection, which the Bicep sets with dts. */
export const SCHEDULER_CONNECTION_SETTING = "DURABLE_TASK_SCHEDULER_CONNECTION_STRING";

/** DURABLE_BACKEND as the azd environment gives it: unset or empty is the default, anything else is refused. */
export function durableBackendOf(env: Readonly<Record<string, string | undefined>>): DurableBackend {
  const value = env.DURABLE_BACKEND?.trim() || DURABLE_BACKENDS[0];
  const backend = DURABLE_BACKENDS.find((known) => known === value);
  if (!backend)
    throw new Error(
      `DURABLE_BACKEND: expected ${DURABLE_BACKENDS.join(" or ")}, got ${JSON.stringify(value)}`,
    );
  return backend;
}

/**
 * The project's host.json as the package carries it for `backend`: with dts, the Durable Task Scheduler named as
 * the storage provider, through the connection setting the Bicep sets; with azureStorage, as it is (Azure
 * Storage is the extension's default, over AzureWebJobsStorage).
 */
export function packagedHostJson(text: string, backend: DurableBackend): string {
  if (backend === "azureStorage") return text;
  const host = JSON.parse(text) as { extensions?: { durableTask?: Record<string, unknown> } };
  const durableTask = host.extensions?.durableTask ?? {};
  const storageProvider = { type: "azureManaged", connectionStringName: SCHEDULER_CONNECTION_SETTING };
  const extensions = { ...host.extensions, durableTask: { ...durableTask, storageProvider } };
  return `${JSON.stringify({ ...host, extensions }, null, 2)}\n`;
}

/** The Function App's part of the project: `main`'s module and what it reaches in src/, built into dist/. */
function functionAppSpec(project: PackageJson): AppPackageSpec {
  const main = project.main ?? "";
  return {
    name: "function-app",
    title: "the Function App",
    entry: main.replace(/^dist\//, "src/").replace(/\.js$/, ".ts"),
    main,
    roots: ["src"],
    compiled: (source) => source.replace(/^src\//, "dist/").replace(/\.ts$/, ".js"),
    assets: ["host.json", ...DASHBOARD_FILES.map((file) => `web/dashboard/${file}`)],
    excluded: LAPTOP_ONLY_PACKAGES,
    builtForTarget: [],
  };
}

/** The package as `writeFunctionAppPackage` would write it, without touching the disk. */
export function functionAppPackage(root = ROOT): AppPackage {
  const project = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  const made = appPackage(functionAppSpec(project), root);
  const main = project.main ?? "";
  if (/^dist\/.*\.js$/.test(main)) return made;
  return {
    ...made,
    problems: [`package.json main: ${main || "(none)"} is not a module in dist/`, ...made.problems],
  };
}

/**
 * Writes the package into `out` (emptied first), taking the compiled modules from `built` (the project's dist/
 * unless given) and host.json for `backend`; throws naming every problem, or a file the build lacks.
 */
export function writeFunctionAppPackage(
  out: string,
  root = ROOT,
  built = join(root, "dist"),
  backend: DurableBackend = DURABLE_BACKENDS[0],
): AppPackage {
  const made = functionAppPackage(root);
  const hostJson = packagedHostJson(readFileSync(join(root, "host.json"), "utf8"), backend);
  writeAppPackage(made, out, root, { built, replaced: { "host.json": hostJson } });
  return made;
}

function main(): void {
  const { values } = parseArgs({ options: { out: { type: "string", default: FUNCTION_APP_PACKAGE_DIR } } });
  const out = resolve(ROOT, values.out);
  const backend = durableBackendOf(process.env);
  const made = writeFunctionAppPackage(out, ROOT, join(ROOT, "dist"), backend);
  console.log(
    JSON.stringify({
      event: "function-app-package.written",
      out: relative(process.cwd(), out),
      durableBackend: backend,
      files: made.files.length,
      packages: made.modules.length,
      dependencies: Object.keys(made.dependencies),
    }),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
