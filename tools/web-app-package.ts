/**
 * The App Service apps' deployment packages (./app-package.ts): the storefront's and the simulated partner's, each
 * its compiled modules (as tsconfig.storefront.json and tsconfig.partner.json build them, so the start command in
 * the Bicep is the same), the web page it serves, and only the runtime packages it imports. App Service runs the
 * package as it is (SCM_DO_BUILD_DURING_DEPLOYMENT=false): no install, no build on the site. better-sqlite3 (the
 * storefront's order book; the partner's file ledger, which its entry point imports) is carried built for App
 * Service's Linux x64 and the deployment's Node.js major (./native-build.ts).
 *
 * Each folder also gets a .webappignore that leaves nothing out: without one, azd leaves node_modules out of an
 * App Service package.
 *
 *   tsx tools/web-app-package.ts <storefront|partner> [--out .build/<app>]   (after its build)
 */
import { writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { STOREFRONT_FILES } from "../src/adapters/web/web-assets.js";
import {
  type AppPackage,
  type AppPackageSpec,
  appPackage,
  hiddenLockfile,
  writeAppPackage,
} from "./app-package.js";
import {
  appServicePlatform,
  fetchPrebuiltAddon,
  type NodePlatform,
  nativeBuildPlan,
  pruneAddonBuild,
  thisPlatform,
} from "./native-build.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

export const WEB_APPS = ["storefront", "partner"] as const;
export type WebApp = (typeof WEB_APPS)[number];

/** Where `azure.yaml` has azd take each App Service app's package from. */
export const webAppPackageDir = (app: WebApp): string => join(".build", app);

/** What azd reads as the package's ignore file: nothing is left out, node_modules included. */
export const WEBAPPIGNORE = "# Everything here is the app as it runs, node_modules included.\n";

/** The app's part of the project: its folder and what it reaches in src/, built into dist/<app>/. */
export function webAppSpec(app: WebApp): AppPackageSpec {
  return {
    name: app,
    title: `the ${app}`,
    entry: `${app}/main.ts`,
    roots: [app, "src"],
    compiled: (source) => `dist/${app}/${source.replace(/\.ts$/, ".js")}`,
    assets: app === "storefront" ? STOREFRONT_FILES.map((file) => `web/storefront/${file}`) : [],
    excluded: [],
    // The storefront's order book, and the partner's file ledger (imported though Azure uses its blob ledger).
    builtForTarget: ["better-sqlite3"],
  };
}

export function webAppPackage(app: WebApp, root = ROOT): AppPackage {
  return appPackage(webAppSpec(app), root);
}

/**
 * Writes the app's package into `out` (emptied first) with its addons built for `target`, and its .webappignore,
 * taking the compiled modules from `built` (the project's dist/ unless given); throws naming every problem, or a
 * file the build lacks.
 */
export function writeWebAppPackage(
  app: WebApp,
  out: string,
  target: NodePlatform,
  options: { readonly root?: string; readonly built?: string; readonly here?: NodePlatform } = {},
): AppPackage {
  const { root = ROOT, here = thisPlatform() } = options;
  const spec = webAppSpec(app);
  const made = appPackage(spec, root);
  writeAppPackage(made, out, root, { built: options.built ?? join(root, "dist") });
  const addons = made.modules.filter((path) =>
    spec.builtForTarget.some((name) => path.endsWith(`node_modules/${name}`)),
  );
  for (const path of addons) {
    if (nativeBuildPlan(here, target) === "fetch") fetchPrebuiltAddon(join(out, path), out, target);
    pruneAddonBuild(join(out, path));
  }
  writeFileSync(join(out, ".webappignore"), WEBAPPIGNORE);
  // Rewritten after the addons changed, so that npm's record stays the newest file of the tree.
  const { name, version } = made.packageJson;
  writeFileSync(
    join(out, "node_modules", ".package-lock.json"),
    `${JSON.stringify(hiddenLockfile(made.lockfile, name, version), null, 2)}\n`,
  );
  return made;
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: "string" } } });
  const app = WEB_APPS.find((known) => known === positionals[0]);
  if (!app) throw new Error(`web-app-package: name the app, ${WEB_APPS.join(" or ")}`);
  const out = resolve(ROOT, values.out ?? webAppPackageDir(app));
  const target = appServicePlatform(process.env);
  const made = writeWebAppPackage(app, out, target);
  console.log(
    JSON.stringify({
      event: "web-app-package.written",
      app,
      out: relative(process.cwd(), out),
      target,
      files: made.files.length,
      packages: made.modules.length,
      dependencies: Object.keys(made.dependencies),
    }),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
