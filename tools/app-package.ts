/**
 * A deployment package of one Node.js application of this project, assembled from the project's own build and
 * node_modules: what the app runs and nothing else. The Function App's (./function-app-package.ts) and the App
 * Service apps' (./web-app-package.ts) are each a spec of this.
 *
 * - the compiled modules the entry point reaches, following its imports, and their maps;
 * - the project files the app reads at run time (host.json, its web pages);
 * - a package.json naming only the packages those modules import (each must be a runtime dependency of the
 *   project), with no scripts, and a package-lock.json cut down to what they need;
 * - node_modules with exactly those packages and what they depend on, copied from the project's own
 *   node_modules at the versions package-lock.json records, less their type declarations and source maps, and
 *   npm's record of that tree (node_modules/.package-lock.json), so that `npm install` in the folder, which azd
 *   runs unless that record is at least as new as package-lock.json, finds nothing to do. No package may run an
 *   install script or be built for one platform, except those the spec builds for the target (./native-build.ts).
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
import ts from "typescript";

export interface PackageJson {
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

export interface LockEntry {
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

export interface Lockfile {
  readonly lockfileVersion: number;
  readonly packages: Record<string, LockEntry>;
}

/** What one application's package holds, and how its sources map to the build. */
export interface AppPackageSpec {
  /** Appended to the project's name for the package's own name: `function-app`, `storefront`. */
  readonly name: string;
  /** The app, as a problem names it: `the Function App`. */
  readonly title: string;
  /** The source module the app starts from: `src/functions/index.ts`. */
  readonly entry: string;
  /** The package.json `main` to write, when the host loads the app by it (the Functions host does). */
  readonly main?: string;
  /** The folders the entry point may import from: each is carried as built. */
  readonly roots: readonly string[];
  /** Where the build puts a source module, relative to the package root: `src/x.ts` → `dist/x.js`. */
  compiled(source: string): string;
  /** Project files the app reads at run time, copied as they are. */
  readonly assets: readonly string[];
  /** Runtime dependencies of the project this app must never carry. */
  readonly excluded: readonly string[];
  /** Packages with an install script that the package carries built for the target (better-sqlite3). */
  readonly builtForTarget: readonly string[];
}

export interface AppPackage {
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
 * The sources the entry point reaches through relative imports (all under `roots`), and the packages they
 * import. A relative import that leaves the roots is a problem: the package carries their build only.
 */
export function reachedSources(
  root: string,
  entry: string,
  read: (path: string) => string = (path) => readFileSync(join(root, path), "utf8"),
  roots: readonly string[] = ["src"],
): { sources: string[]; packages: Map<string, string>; problems: string[] } {
  const sources = new Set<string>();
  const packages = new Map<string, string>();
  const problems: string[] = [];
  const queue = [entry];
  const inRoots = (path: string) => roots.some((folder) => path.startsWith(`${folder}/`));
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (sources.has(file)) continue;
    sources.add(file);
    if (!file.endsWith(".ts")) continue;
    for (const specifier of runtimeImports(read(file), file)) {
      if (specifier.startsWith(".")) {
        const target = relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, ".ts");
        if (inRoots(target)) queue.push(target);
        else
          problems.push(
            `${file} imports ${specifier}, outside ${roots.map((r) => `${r}/`).join(" and ")}, which the package does not carry`,
          );
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

/** The package name of a lock path: `node_modules/a/node_modules/@s/b` → `@s/b`. */
export function lockPathName(path: string): string {
  return packageName(path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
}

/**
 * What keeps a module out of a package assembled on one machine and run on Linux in Azure: a package the app
 * must not carry; one package-lock.json marks `dev` (only the project's devDependencies lead to it; a package
 * that is also a devDependency of ours but that a runtime dependency needs is a runtime package); one built for
 * one platform; one with an install script the project lets run (`allowScripts`: a native build, say), unless
 * the package is built for the target. Scripts the project turns off (`allowScripts: false`) never ran here, so
 * the copy is as npm installed it.
 */
export function moduleProblems(
  lock: Lockfile,
  modules: readonly string[],
  allowScripts: Readonly<Record<string, boolean>>,
  rules: {
    readonly title: string;
    readonly excluded: readonly string[];
    readonly builtForTarget?: readonly string[];
  },
): string[] {
  const problems: string[] = [];
  for (const path of modules) {
    const entry = lock.packages[path] as LockEntry;
    const name = lockPathName(path);
    if (rules.excluded.includes(name)) problems.push(`${path}: laptop-only, not for ${rules.title}`);
    if (entry.dev === true) problems.push(`${path}: a devDependency`);
    if (rules.builtForTarget?.includes(name)) continue;
    if (entry.hasInstallScript === true && allowScripts[name] !== false)
      problems.push(`${path}: runs an install script (a build for the machine that installs it)`);
    if (entry.os || entry.cpu) problems.push(`${path}: built for one platform (os/cpu)`);
  }
  return problems;
}

/** The runtime dependencies the sources import, with what is wrong with the others. */
function importedDependencies(
  project: PackageJson,
  packages: ReadonlyMap<string, string>,
  excluded: readonly string[],
): { dependencies: Record<string, string>; problems: string[] } {
  const dependencies: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, importer] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
    const version = project.dependencies?.[name];
    if (excluded.includes(name)) problems.push(`${importer} imports ${name}, a laptop-only package`);
    else if (version) dependencies[name] = version;
    else if (project.devDependencies?.[name]) problems.push(`${importer} imports ${name}, a devDependency`);
    else problems.push(`${importer} imports ${name}, which package.json does not list`);
  }
  return { dependencies, problems };
}

/** The package as `writeAppPackage` would write it, without touching the disk. */
export function appPackage(spec: AppPackageSpec, root: string): AppPackage {
  const project = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as Lockfile;
  const reached = reachedSources(root, spec.entry, undefined, spec.roots);
  const imported = importedDependencies(project, reached.packages, spec.excluded);
  const { dependencies } = imported;
  const closure = dependencyClosure(lock, Object.keys(dependencies));
  const problems = [
    ...reached.problems,
    ...imported.problems,
    ...closure.problems,
    ...moduleProblems(lock, closure.modules, project.allowScripts ?? {}, spec),
  ];
  const compiled = reached.sources.flatMap((source) => {
    const out = spec.compiled(source);
    return out.endsWith(".js") ? [out, `${out}.map`] : [out];
  });
  const files = ["package.json", "package-lock.json", ...spec.assets, ...compiled].sort();
  const packageJson: PackageJson = {
    name: `${project.name}-${spec.name}`,
    version: project.version,
    type: project.type ?? "commonjs",
    ...(spec.main ? { main: spec.main } : {}),
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
 * the runtime tree's bytes. The app's own maps stay, for its stack traces.
 */
export const NOT_LOADED = /\.(d\.[cm]?ts|map)$/;

/**
 * A package folder copied without its own node_modules (each nested package is copied on its own) and without
 * what Node.js never loads. Files are hard-linked where the file system allows, which is much faster than
 * copying some 25,000 files, and copied otherwise; links are dereferenced.
 */
export function copyPackage(from: string, to: string, top = true): void {
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

/** What keeps `made` from being written: a file the build lacks, a package installed at another version. */
function writeProblems(made: AppPackage, copied: readonly string[], root: string, built: string): string[] {
  const problems = [...made.problems];
  for (const file of copied)
    if (!existsSync(sourceOf(file, root, built))) problems.push(`${file} is missing: run the build first`);
  for (const path of made.modules) {
    const installed = join(root, path, "package.json");
    const version = existsSync(installed)
      ? (JSON.parse(readFileSync(installed, "utf8")) as { version?: string }).version
      : undefined;
    const locked = made.lockfile.packages[path]?.version;
    if (version !== locked)
      problems.push(`${path} is ${version ?? "not installed"}, package-lock.json says ${locked}: run npm ci`);
  }
  return problems;
}

/** npm's record of an installed tree, node_modules/.package-lock.json: the lockfile less its root entry. */
export function hiddenLockfile(lockfile: Lockfile, name: string, version: string): Record<string, unknown> {
  const { "": _root, ...packages } = lockfile.packages;
  return { name, version, lockfileVersion: lockfile.lockfileVersion, requires: true, packages };
}

/**
 * Writes the package into `out` (emptied first), taking the compiled modules from `built` (the project's dist/
 * unless given) and `files` that replace a project file's content (host.json for the chosen backend); throws
 * naming every problem, or a file the build lacks. npm's record of the tree is written last, so that it is
 * newer than every file it describes.
 */
export function writeAppPackage(
  made: AppPackage,
  out: string,
  root: string,
  options: { readonly built?: string; readonly replaced?: Readonly<Record<string, string>> } = {},
): void {
  const built = options.built ?? join(root, "dist");
  const replaced = options.replaced ?? {};
  const written = ["package.json", "package-lock.json", ...Object.keys(replaced)];
  const copied = made.files.filter((file) => !written.includes(file));
  const problems = writeProblems(made, copied, root, built);
  if (problems.length > 0) throw new Error(`${made.packageJson.name}:\n  ${problems.join("\n  ")}`);

  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const file of copied) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    cpSync(sourceOf(file, root, built), join(out, file));
  }
  for (const [file, text] of Object.entries(replaced)) writeFileSync(join(out, file), text);
  writeFileSync(join(out, "package.json"), `${JSON.stringify(made.packageJson, null, 2)}\n`);
  writeFileSync(join(out, "package-lock.json"), `${JSON.stringify(made.lockfile, null, 2)}\n`);
  for (const path of made.modules) copyPackage(join(root, path), join(out, path));
  mkdirSync(join(out, "node_modules"), { recursive: true });
  const { name, version } = made.packageJson;
  writeFileSync(
    join(out, "node_modules", ".package-lock.json"),
    `${JSON.stringify(hiddenLockfile(made.lockfile, name, version), null, 2)}\n`,
  );
}
