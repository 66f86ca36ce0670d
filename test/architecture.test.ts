import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
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
  const statics = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)];
  const bare = [...text.matchAll(/^\s*import\s*"([^"]+)"/gm)];
  const dynamics = [...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)];
  return [...statics, ...bare, ...dynamics].map((m) => m[1] as string);
}

/**
 * The room a file lives in: `src/<layer>`, `laptop/<room>`, and for the simulation its sub-rooms
 * (`laptop/simulation/partner`, ...; its loose files are `laptop/simulation`); the storefront, an
 * application of its own, is one room.
 */
function roomOf(path: string): string {
  const parts = relative(ROOT, path).split("/");
  const [top, room, sub] = parts;
  if (top === "storefront" || top === "partner") return top;
  if (top === "laptop" && room === "simulation" && parts.length > 3) return `${top}/${room}/${sub}`;
  return `${top}/${room}`;
}

/** A package's name from an import specifier: `@scope/name` or `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

const PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const RUNTIME_PACKAGE = new RegExp(
  `^(node:.*|${Object.keys(PACKAGE.dependencies)
    .map((name) => name.replace(/[/.-]/g, "\\$&"))
    .join("|")})$`,
);
const ANY_PACKAGE = /.*/;
const SRC = [
  "src/domain",
  "src/ports",
  "src/state",
  "src/telemetry",
  "src/orchestrators",
  "src/agents",
  "src/supervisor",
  "src/scheduler",
  "src/breaker",
  "src/operator",
  "src/config",
  "src/adapters",
  "src/functions",
];
const HANDLER_BASE = ["src/domain", "src/ports", "src/state", "src/telemetry"];

/**
 * The dependency rule (docs/architecture.md): which room may import which, and which packages. Every
 * room of src/ and laptop/ has a line; a file in a room without one fails.
 */
const ALLOWED: Record<string, { rooms: string[]; packages: RegExp }> = {
  "src/domain": { rooms: [], packages: /^zod$/ },
  "src/ports": { rooms: ["src/domain"], packages: /^$/ },
  "src/state": { rooms: ["src/domain", "src/ports"], packages: /^$/ },
  "src/telemetry": { rooms: ["src/domain", "src/ports"], packages: /^@opentelemetry\/api$/ },
  "src/orchestrators": { rooms: HANDLER_BASE, packages: /^(durable-functions|zod)$/ },
  // The Agent's HTTP client (undici) is its only package: the call to the partner is what an Agent is.
  "src/agents": {
    rooms: ["src/domain", "src/ports", "src/telemetry", "src/breaker"],
    packages: /^(node:.*|undici)$/,
  },
  "src/supervisor": { rooms: HANDLER_BASE, packages: /^$/ },
  "src/scheduler": { rooms: HANDLER_BASE, packages: /^node:crypto$/ },
  // The circuit breakers shared by every Agent: the domain's state machine over a store port.
  "src/breaker": { rooms: ["src/domain", "src/ports"], packages: /^node:crypto$/ },
  "src/operator": { rooms: HANDLER_BASE, packages: /^node:/ },
  "src/config": { rooms: ["src/domain"], packages: /^$/ },
  "src/adapters": { rooms: ["src/domain", "src/ports", "src/telemetry"], packages: RUNTIME_PACKAGE },
  "src/functions": { rooms: SRC, packages: RUNTIME_PACKAGE },
  // The storefront knows the queues and the message contracts, never the Scheduler's API or stores.
  storefront: { rooms: ["src/domain", "src/ports", "src/adapters"], packages: RUNTIME_PACKAGE },
  // The laptop world: what the Functions worker gives an app, small HTTP helpers, the durable engine.
  "laptop/worker": { rooms: ["src/ports"], packages: /^(node:.*|@azure\/functions)$/ },
  "laptop/http": { rooms: [], packages: /^node:/ },
  // The engine imports nothing of the app's behaviour: ports' types and the SQLite wrapper only.
  "laptop/durable": {
    rooms: ["laptop/worker", "src/ports", "src/adapters"],
    packages: /^(node:.*|@azure\/functions|durable-functions)$/,
  },
  "laptop/stand-ins": { rooms: ["src/adapters", "src/ports"], packages: ANY_PACKAGE },
  // The app's ports on SQLite, for the laptop's hosts: adapters the Function App never loads.
  "laptop/sqlite": {
    rooms: ["src/domain", "src/ports", "src/adapters"],
    packages: /^(node:.*|better-sqlite3|zod)$/,
  },
  // The host for Microsoft's Durable Task extension (a .NET process) and the worker side of its channel.
  "laptop/extension-host": { rooms: ["laptop/worker", "src/ports"], packages: /^node:/ },
  "laptop/simulation": { rooms: ["src/domain", "src/ports"], packages: /^node:/ },
  // The simulated partner, an application of its own (deployed beside the Function App): the faulty remote service.
  partner: { rooms: ["src/adapters", "src/domain", "src/ports"], packages: RUNTIME_PACKAGE },
  // How the laptop runs the partner: in a worker thread of the embedded host.
  "laptop/simulation/partner": { rooms: ["partner", "src/adapters", "src/ports"], packages: /^node:/ },
  "laptop/simulation/oracles": {
    rooms: ["partner", "src/adapters", "src/domain", "src/ports", "src/state"],
    packages: /^node:/,
  },
  "laptop/embedded": {
    rooms: [
      ...SRC,
      "laptop/durable",
      "laptop/sqlite",
      "laptop/worker",
      "laptop/http",
      "laptop/simulation",
      "laptop/simulation/partner",
      "partner",
      "laptop/simulation/oracles",
      "storefront",
    ],
    packages: ANY_PACKAGE,
  },
  "laptop/simulation/chaos": {
    rooms: [
      ...SRC,
      "laptop/sqlite",
      "laptop/embedded",
      "laptop/simulation",
      "laptop/simulation/partner",
      "partner",
      "laptop/simulation/oracles",
    ],
    packages: /^node:/,
  },
  "laptop/functions-host": {
    rooms: [
      ...SRC,
      "laptop/durable",
      "laptop/sqlite",
      "laptop/extension-host",
      "laptop/worker",
      "laptop/http",
      "laptop/embedded",
      "laptop/stand-ins",
      "laptop/simulation/partner",
      "partner",
      "storefront",
    ],
    packages: ANY_PACKAGE,
  },
  "laptop/cli": {
    rooms: [
      ...SRC,
      "laptop/embedded",
      "laptop/functions-host",
      "laptop/simulation",
      "laptop/simulation/partner",
      "partner",
      "laptop/simulation/chaos",
    ],
    packages: ANY_PACKAGE,
  },
};

/** Where adapters may be constructed: the composition roots, and what starts stand-ins or checks a run. */
const COMPOSITION_ROOTS = [
  "src/functions",
  "storefront",
  "partner",
  "laptop/embedded",
  "laptop/functions-host",
  "laptop/cli",
  "laptop/stand-ins",
  "laptop/simulation/partner",
  "laptop/simulation/oracles",
  "laptop/simulation/chaos",
];

const CODE_FOLDERS = ["src", "laptop", "storefront", "partner"].filter((folder) =>
  existsSync(join(ROOT, folder)),
);
const files = CODE_FOLDERS.flatMap((folder) => sourceFiles(join(ROOT, folder)));

describe("architecture", () => {
  it("finds the source tree", () => {
    expect(files.some((f) => roomOf(f) === "src/domain")).toBe(true);
    expect(files.some((f) => roomOf(f) === "laptop/durable")).toBe(true);
  });

  it("has a dependency rule for every room of src/ and laptop/", () => {
    const rooms = new Set(files.map(roomOf));
    expect([...rooms].filter((room) => !ALLOWED[room])).toEqual([]);
  });

  it("F26-4: knows every folder of src/ and laptop/, whatever it holds, and SRC is every room of src/", () => {
    const folders = ["src", "laptop"].flatMap((top) =>
      readdirSync(join(ROOT, top), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${top}/${entry.name}`),
    );
    expect(folders).toContain("laptop/extension-host");
    expect(folders.filter((folder) => !ALLOWED[folder])).toEqual([]);
    expect([...SRC].sort()).toEqual(folders.filter((folder) => folder.startsWith("src/")).sort());
  });

  for (const file of files) {
    const room = roomOf(file);
    const rule = ALLOWED[room];
    if (!rule) continue;
    it(`${relative(ROOT, file)} imports only what ${room} may`, () => {
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith(".")) {
          const target = roomOf(join(file, "..", specifier));
          if (target === room) continue;
          expect(rule.rooms, `${specifier} reaches into ${target}`).toContain(target);
        } else {
          expect(specifier, `package ${specifier} in ${room}`).toMatch(rule.packages);
        }
      }
    });
  }

  it("no room reaches back into a room that reaches it: the rooms form no loop", () => {
    const edges = new Map<string, Set<string>>();
    for (const file of files) {
      for (const specifier of importsOf(file).filter((s) => s.startsWith("."))) {
        const from = roomOf(file);
        const to = roomOf(join(file, "..", specifier));
        if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
      }
    }
    expect(loopsIn(edges)).toEqual([]);
  });

  it("no file under src/ imports a devDependency or anything of laptop/", () => {
    const dev = new Set(Object.keys(PACKAGE.devDependencies));
    const found: string[] = [];
    for (const file of sourceFiles(join(ROOT, "src"))) {
      for (const specifier of importsOf(file)) {
        const outside = specifier.startsWith(".") && !roomOf(join(file, "..", specifier)).startsWith("src/");
        if (outside || dev.has(packageOf(specifier))) found.push(`${relative(ROOT, file)}: ${specifier}`);
      }
    }
    expect(found).toEqual([]);
  });

  it("F26-3: no module imports itself through others: the project's TypeScript has no import circle", () => {
    const roots = ["src", "laptop", "partner", "storefront", "bench", "tools", "test"];
    const all = roots.flatMap((folder) => typeScriptFiles(join(ROOT, folder)));
    expect(all.length).toBeGreaterThan(files.length);
    expect(importCircles(all).map((circle) => circle.map((f) => relative(ROOT, f)).join(" -> "))).toEqual([]);
  });

  it("orchestrator code makes no telemetry: its spans would repeat on every replay", () => {
    const orchestratorFiles = files.filter(
      (f) => roomOf(f) === "src/orchestrators" && !f.includes(`${join("orchestrators", "activities")}`),
    );
    expect(orchestratorFiles.map((f) => relative(ROOT, f))).toContain(
      "src/orchestrators/order-processing.ts",
    );
    for (const file of orchestratorFiles) {
      for (const specifier of importsOf(file)) {
        expect(specifier, relative(ROOT, file)).not.toMatch(/telemetry|@opentelemetry/);
      }
    }
  });

  describe("only the composition roots construct adapters", () => {
    const adapterFiles = files.filter((f) => ["src/adapters", "laptop/sqlite"].includes(roomOf(f)));
    const adapters = adapterFiles.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/^export (?:class|function|async function) (\w+)/gm)]
        .map((m) => m[1] as string)
        .filter((name) => /^[A-Z]|^(create|open|start)[A-Z]/.test(name))
        .map((name) => ({ name, file })),
    );

    it("finds the adapters' constructors and factories", () => {
      expect(adapters.map((a) => a.name)).toEqual(
        expect.arrayContaining([
          "SqliteStateStore",
          "CosmosStateStore",
          "createServiceBusClient",
          "openSqlPool",
        ]),
      );
    });

    for (const file of files.filter((f) => !COMPOSITION_ROOTS.includes(roomOf(f)))) {
      it(`${relative(ROOT, file)} constructs no adapter`, () => {
        const text = readFileSync(file, "utf8");
        for (const adapter of adapters) {
          // An adapter's own parts, in its technology's folder, are built by that adapter.
          if (dirname(adapter.file) === dirname(file)) continue;
          const call = new RegExp(`(?:new\\s+${adapter.name}\\b|\\b${adapter.name}\\s*\\()`);
          expect(text, `${adapter.name} (${relative(ROOT, adapter.file)})`).not.toMatch(call);
        }
      });
    }
  });

  it("F26-5: no file of src/ is over 400 lines: the app as deployed reads one concern a file", () => {
    const MAX_FILE_LINES = 400;
    const long = files
      .filter((file) => roomOf(file).startsWith("src/"))
      .map((file) => ({
        file: relative(ROOT, file),
        lines: readFileSync(file, "utf8").split("\n").length - 1,
      }))
      .filter((f) => f.lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  describe("units stay small in every room", () => {
    const MAX_FUNCTION_LINES = 80;
    const MAX_CLASS_LINES = 400;
    for (const file of files) {
      it(`${relative(ROOT, file)}: no function over ${MAX_FUNCTION_LINES} lines, no class over ${MAX_CLASS_LINES}`, () => {
        expect(longUnits(file, MAX_FUNCTION_LINES, MAX_CLASS_LINES)).toEqual([]);
      });
    }
  });
});

/** Every function (method, arrow function) over `maxFunction` lines and class over `maxClass` lines. */
function longUnits(path: string, maxFunction: number, maxClass: number): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
    const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1;
    if (ts.isClassLike(node) && lines > maxClass) found.push(`class at line ${first + 1}: ${lines} lines`);
    if (ts.isFunctionLike(node) && "body" in node && node.body && lines > maxFunction)
      found.push(`function at line ${first + 1}: ${lines} lines`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Each loop in a directed graph, as the path that closes it (depth-first, each loop once per entry). */
function loopsIn(edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const loops: string[] = [];
  const done = new Set<string>();
  const walk = (node: string, path: string[]): void => {
    if (path.includes(node)) {
      loops.push([...path.slice(path.indexOf(node)), node].join(" -> "));
      return;
    }
    if (done.has(node)) return;
    for (const next of edges.get(node) ?? []) walk(next, [...path, node]);
    done.add(node);
  };
  for (const node of edges.keys()) walk(node, []);
  return loops;
}

/** Every TypeScript file under `dir`, tests included (a test may import a support module that imports it). */
function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : typeScriptFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The project's files a file imports statically (type-only imports too), resolved from `.js` to `.ts`. */
function projectImportsOf(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const statics = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms)];
  const bare = [...text.matchAll(/^\s*import\s*"(\.[^"]+)"/gm)];
  return [...statics, ...bare]
    .map((m) => join(dirname(path), (m[1] as string).replace(/\.js$/, ".ts")))
    .filter((target) => target.endsWith(".ts") && existsSync(target));
}

/** Import circles among `all`, each as the files that close it (depth-first: at least one per circle). */
function importCircles(all: readonly string[]): string[][] {
  const circles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const walk = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const next of projectImportsOf(file)) {
      if (state.get(next) === "open") circles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) walk(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of all) if (!state.has(file)) walk(file);
  return circles;
}
