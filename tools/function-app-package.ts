/**
 * The Function App's deployment package: what the app runs and nothing else. azd deploys the folder this writes
 * (azure.yaml: the `api` service's `dist`, built locally, `remoteBuild: false`); `test/infra/function-package.test.ts`
 * reads the same listing.
 *
 * - the compiled modules the entry point (`package.json` `main`) reaches, following its imports, and their maps;
 * - host.json, and the dashboard's files the operator API serves (web/dashboard/);
 * - a package.json naming only the packages those modules import (each must be a runtime dependency of the
 *   project), and a package-lock.json cut down to what they need;
 * - node_modules with exactly those packages and what they depend on, copied from the project's own
 *   node_modules at the versions package-lock.json records, less their type declarations and source maps. None
 *   may run an install script or be built for one platform: the folder is assembled on the deployer's machine
 *   and runs on Linux.
 *
 *   tsx tools/function-app-package.ts [--out .build/function-app]   (after `npm run build`)
 */
import {
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import ts from "typescript";
import { DASHBOARD_FILES } from "../src/adapters/web/web-assets.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where `azure.yaml` has azd take the Function App's package from. */
export const FUNCTION_APP_PACKAGE_DIR = join(".build", "function-app");

/**
 * Runtime dependencies of the project that only the laptop's hosts and the App Service apps use: the Function
 * App's package must never carry them, whatever it imports.
 */
export const LAPTOP_ONLY_PACKAGES: readonly string[] = ["better-sqlite3"];

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly type?: string;
  readonly main?: string;
  readonly engines?: Record<string, string>;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  /** npm's per-package switch for install scripts: true lets one run, false keeps it from running. */
  readonly allowScripts?: Record<string, boolean>;
}

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly optional?: boolean;
  readonly hasInstallScript?: boolean;
  readonly os?: readonly string[];
  readonly cpu?: readonly string[];
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly [key: string]: unknown;
}

interface Lockfile {
  readonly lockfileVersion: number;
  readonly packages: Record<string, LockEntry>;
}

export interface FunctionAppPackage {
  /** The package's files outside node_modules, relative to its root, sorted. */
  readonly files: readonly string[];
  /** The packages in its node_modules, as package-lock.json paths (`node_modules/a/node_modules/b`), sorted. */
  readonly modules: readonly string[];
  /** The package names its modules import, with the versions package.json gives them. */
  readonly dependencies: Readonly<Record<string, string>>;
  readonly packageJson: PackageJson;
  readonly lockfile: Lockfile;
  /** What stops the package from being made: each names the file or package at fault. */
  readonly problems: readonly string[];
}

/** A package's name from an import specifier: `@scope/name` or `name`. */
export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/** The module specifiers a TypeScript file keeps at run time: type-only imports and exports are erased. */
export function runtimeImports(text: string, fileName = "module.ts"): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The sources the entry point reaches through relative imports (all under src/), and the packages they
 * import. A relative import that leaves src/ is a problem: the package carries src/'s build only.
 */
export function reachedSources(
  root: string,
  entry: string,
  read: (path: string) => string = (path) => readFileSync(join(root, path), "utf8"),
): { sources: string[]; packages: Map<string, string>; problems: string[] } {
  const sources = new Set<string>();
  const packages = new Map<string, string>();
  const problems: string[] = [];
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (sources.has(file)) continue;
    sources.add(file);
    if (!file.endsWith(".ts")) continue;
    for (const specifier of runtimeImports(read(file), file)) {
      if (specifier.startsWith(".")) {
        const target = relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, ".ts");
        if (target.startsWith("src/")) queue.push(target);
        else problems.push(`${file} imports ${specifier}, outside src/, which the package does not carry`);
      } else if (!isBuiltin(specifier)) {
        const name = packageName(specifier);
        if (!packages.has(name)) packages.set(name, file);
      }
    }
  }
  return { sources: [...sources].sort(), packages, problems };
}

/** Where Node.js looks for `name` from the package at lock path `from` (`""` is the project itself). */
function resolveIn(packages: Lockfile["packages"], from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base === "" ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (base === "") return undefined;
    const at = base.lastIndexOf("/node_modules/");
    base = at < 0 ? "" : base.slice(0, at);
  }
}

/** The lock paths of the packages `roots` need, following dependencies as Node.js resolves them. */
export function dependencyClosure(
  lock: Lockfile,
  roots: readonly string[],
): { modules: string[]; problems: string[] } {
  const modules = new Set<string>();
  const problems: string[] = [];
  const queue: [string, string, boolean][] = roots.map((name) => ["", name, false]);
  while (queue.length > 0) {
    const [from, name, optional] = queue.shift() as [string, string, boolean];
    const path = resolveIn(lock.packages, from, name);
    if (!path) {
      if (!optional) problems.push(`${name}, needed by ${from || "the app"}, is not in package-lock.json`);
      continue;
    }
    if (modules.has(path)) continue;
    modules.add(path);
    const entry = lock.packages[path] as LockEntry;
    const meta = entry.peerDependenciesMeta ?? {};
    for (const dep of Object.keys(entry.dependencies ?? {})) queue.push([path, dep, false]);
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) queue.push([path, dep, true]);
    for (const dep of Object.keys(entry.peerDependencies ?? {}))
      queue.push([path, dep, meta[dep]?.optional === true]);
  }
  return { modules: [...modules].sort(), problems };
}

/**
 * What keeps a module out of a package assembled on one machine and run on Linux in Azure: a laptop-only
 * package; one package-lock.json marks `dev` (only the project's devDependencies lead to it; a package that is
 * also a devDependency of ours but that a runtime dependency needs is a runtime package); one built for one
 * platform; one with an install script the project lets run (`allowScripts`: a native build, say). Scripts the
 * project turns off (`allowScripts: false`) never ran here, so the copy is as npm installed it.
 */
export function moduleProblems(
  lock: Lockfile,
  modules: readonly string[],
  allowScripts: Readonly<Record<string, boolean>>,
): string[] {
  const problems: string[] = [];
  for (const path of modules) {
    const entry = lock.packages[path] as LockEntry;
    const name = packageName(path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    if (LAPTOP_ONLY_PACKAGES.includes(name)) problems.push(`${path}: laptop-only, not for the Function App`);
    if (entry.dev === true) problems.push(`${path}: a devDependency`);
    if (entry.hasInstallScript === true && allowScripts[name] !== false)
      problems.push(`${path}: runs an install script (a build for the machine that installs it)`);
    if (entry.os || entry.cpu) problems.push(`${path}: built for one platform (os/cpu)`);
  }
  return problems;
}

/** The package as `writeFunctionAppPackage` would write it, without touching the disk. */
export function functionAppPackage(root = ROOT): FunctionAppPackage {
  const project = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as Lockfile;
  const problems: string[] = [];
  const main = project.main ?? "";
  const entry = main.replace(/^dist\//, "src/").replace(/\.js$/, ".ts");
  if (!/^dist\/.*\.js$/.test(main))
    problems.push(`package.json main: ${main || "(none)"} is not a module in dist/`);
  const reached = reachedSources(root, entry);
  problems.push(...reached.problems);

  const dependencies: Record<string, string> = {};
  for (const [name, importer] of [...reached.packages].sort(([a], [b]) => a.localeCompare(b))) {
    const version = project.dependencies?.[name];
    if (LAPTOP_ONLY_PACKAGES.includes(name))
      problems.push(`${importer} imports ${name}, a laptop-only package`);
    else if (version) dependencies[name] = version;
    else if (project.devDependencies?.[name]) problems.push(`${importer} imports ${name}, a devDependency`);
    else problems.push(`${importer} imports ${name}, which package.json does not list`);
  }
  const closure = dependencyClosure(lock, Object.keys(dependencies));
  problems.push(...closure.problems);
  problems.push(...moduleProblems(lock, closure.modules, project.allowScripts ?? {}));

  const compiled = reached.sources.flatMap((source) => {
    const out = source.replace(/^src\//, "dist/");
    return out.endsWith(".ts") ? [out.replace(/\.ts$/, ".js"), out.replace(/\.ts$/, ".js.map")] : [out];
  });
  const files = [
    "host.json",
    "package.json",
    "package-lock.json",
    ...DASHBOARD_FILES.map((file) => `web/dashboard/${file}`),
    ...compiled,
  ].sort();
  const packageJson: PackageJson = {
    name: `${project.name}-function-app`,
    version: project.version,
    type: project.type ?? "commonjs",
    main,
    ...(project.engines ? { engines: project.engines } : {}),
    dependencies,
  };
  const lockfile: Lockfile = {
    ...lock,
    packages: {
      "": { name: packageJson.name, version: packageJson.version, dependencies },
      ...Object.fromEntries(closure.modules.map((path) => [path, lock.packages[path] as LockEntry])),
    },
  };
  return { files, modules: closure.modules, dependencies, packageJson, lockfile, problems };
}

/**
 * Files of an installed package that Node.js never loads: type declarations and source maps, more than half of
 * the runtime tree's bytes. The app's own maps stay (dist/), for its stack traces.
 */
export const NOT_LOADED = /\.(d\.[cm]?ts|map)$/;

/**
 * A package folder copied without its own node_modules (each nested package is copied on its own) and without
 * what Node.js never loads. Files are hard-linked where the file system allows, which is much faster than
 * copying some 25,000 files, and copied otherwise; links are dereferenced.
 */
function copyPackage(from: string, to: string, top = true): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (top && name === "node_modules") continue;
    const source = join(from, name);
    const target = join(to, name);
    if (statSync(source).isDirectory()) copyPackage(source, target, false);
    else if (!NOT_LOADED.test(name)) linkOrCopy(source, target);
  }
}

function linkOrCopy(source: string, target: string): void {
  try {
    linkSync(realpathSync(source), target);
  } catch {
    copyFileSync(source, target);
  }
}

/** Where a file of the package comes from: dist/ from the build given, anything else from the project. */
function sourceOf(file: string, root: string, built: string): string {
  return file.startsWith("dist/") ? join(built, file.slice("dist/".length)) : join(root, file);
}

/**
 * Writes the package into `out` (emptied first), taking the compiled modules from `built` (the project's dist/
 * unless given); throws naming every problem, or a file the build lacks.
 */
export function writeFunctionAppPackage(
  out: string,
  root = ROOT,
  built = join(root, "dist"),
): FunctionAppPackage {
  const made = functionAppPackage(root);
  const problems = [...made.problems];
  const copied = made.files.filter((file) => !["package.json", "package-lock.json"].includes(file));
  for (const file of copied)
    if (!existsSync(sourceOf(file, root, built)))
      problems.push(`${file} is missing: run npm run build first`);
  for (const path of made.modules) {
    const installed = join(root, path, "package.json");
    const version = existsSync(installed)
      ? (JSON.parse(readFileSync(installed, "utf8")) as { version?: string }).version
      : undefined;
    const locked = made.lockfile.packages[path]?.version;
    if (version !== locked)
      problems.push(`${path} is ${version ?? "not installed"}, package-lock.json says ${locked}: run npm ci`);
  }
  if (problems.length > 0) throw new Error(`function app package:\n  ${problems.join("\n  ")}`);

  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const file of copied) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    cpSync(sourceOf(file, root, built), join(out, file));
  }
  writeFileSync(join(out, "package.json"), `${JSON.stringify(made.packageJson, null, 2)}\n`);
  writeFileSync(join(out, "package-lock.json"), `${JSON.stringify(made.lockfile, null, 2)}\n`);
  for (const path of made.modules) copyPackage(join(root, path), join(out, path));
  return made;
}

function main(): void {
  const { values } = parseArgs({ options: { out: { type: "string", default: FUNCTION_APP_PACKAGE_DIR } } });
  const out = resolve(ROOT, values.out);
  const made = writeFunctionAppPackage(out);
  console.log(
    JSON.stringify({
      event: "function-app-package.written",
      out: relative(process.cwd(), out),
      files: made.files.length,
      packages: made.modules.length,
      dependencies: Object.keys(made.dependencies),
    }),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
