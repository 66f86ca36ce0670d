// tsx bench/engines.ts [--orders 200] [--rounds 2]   (npm run bench -- --only engines runs it)
// The built app under `sas host` on each durable engine in one sitting, taking turns (local, extension,
// local, extension with two rounds), each run on fresh data and free ports (bench/engine-run.ts).
// Without a .NET SDK 8 or later it runs nothing and says why. Prints one JSON object.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findDotnetSdk } from "../laptop/extension-host/dotnet-sdk.js";
import { buildExtensionHost } from "../laptop/extension-host/extension-build.js";
import { integer, optionsOrExit, parseFlags } from "./bench-options.js";
import { buildApp } from "./checkout-app.js";
import { type EngineName, type EngineRun, runEngine } from "./engine-run.js";

const USAGE =
  "usage: tsx bench/engines.ts [--orders <n>] [--rounds <n>]\n" +
  "  orders of each run 1 to 100000 (default 200); rounds 1 to 10 (default 2), each a run on the\n" +
  "  local engine, then one on Microsoft's Durable Task extension";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface EnginesResult {
  readonly orders: number;
  readonly rounds: number;
  /** Why nothing ran (no .NET SDK); absent when the runs ran. */
  readonly notRun?: string;
  /** The extension host's version, as the SDK found says. */
  readonly dotnet?: string;
  /** In the order they ran. */
  readonly runs: readonly EngineRun[];
  /** The machine's 1-minute load average as the sitting began and ended. */
  readonly load: { readonly before: number; readonly after: number };
}

export function parseEnginesOptions(args: readonly string[]): { orders: number; rounds: number } {
  const values = parseFlags(args, {
    orders: { type: "string", default: "200" },
    rounds: { type: "string", default: "2" },
  });
  return {
    orders: integer("orders", values.orders, 1, 100_000),
    rounds: integer("rounds", values.rounds, 1, 10),
  };
}

async function main(args: readonly string[]): Promise<EnginesResult> {
  const { orders, rounds } = optionsOrExit(() => parseEnginesOptions(args), USAGE);
  const log = (line: string) => process.stderr.write(`engines: ${line}\n`);
  const before = loadavg()[0] ?? 0;
  const sdk = findDotnetSdk();
  if (!sdk.found) {
    const notRun = `no .NET SDK 8 or later for Microsoft's Durable Task extension (${sdk.why})`;
    return { orders, rounds, notRun, runs: [], load: { before, after: loadavg()[0] ?? 0 } };
  }
  log("building the extension host (cached) and the app");
  await buildExtensionHost();
  const appRoot = mkdtempSync(join(tmpdir(), "sas-engines-app-"));
  try {
    buildApp(ROOT, appRoot);
    const runs: EngineRun[] = [];
    const sequence: EngineName[] = Array.from(
      { length: rounds },
      () => ["local", "extension"] as const,
    ).flat();
    for (const engine of sequence) {
      runs.push(await runEngine({ checkout: ROOT, appRoot, engine, orders, log }));
      const last = runs[runs.length - 1] as EngineRun;
      log(`${engine}: ${last.orders} orders final in ${last.seconds.toFixed(1)} s`);
    }
    return { orders, rounds, dotnet: sdk.version, runs, load: { before, after: loadavg()[0] ?? 0 } };
  } finally {
    rmSync(appRoot, { recursive: true, force: true, maxRetries: 10 });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    // The clients' timers may outlive the run: end once the result is out.
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0)),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}
