// tsx bench/work.ts [--orders 5000] [--azure-orders 1000] [--timeout 300]   (npm run bench runs it)
// The work each order costs with this build, counted rather than timed: the embedded host's (`sas
// demo` on disk, its database's durable work and state-record writes, its partner calls and rows
// written) and the Azure path's (`sas host` against counted Cosmos DB and Service Bus stand-ins,
// bench/azure-work.ts). Prints one JSON object.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DemoSummary } from "../laptop/embedded/demo.js";
import { type AzureWork, measureAzureWork } from "./azure-work.js";
import { integer, parseFlags, UsageError } from "./bench-options.js";
import { explainDemo, outcomeOf } from "./child-outcome.js";
import { countDurableWork, type DurableWork } from "./work-counts.js";

const USAGE =
  "usage: tsx bench/work.ts [--orders <n>] [--azure-orders <n>] [--timeout <s>]\n" +
  "  orders of the embedded run 1 to 1000000 (default 5000), of the Azure-path run 1 to 100000\n" +
  "  (default 1000), seconds the demo waits for its orders to settle 1 to 86400 (default 300)";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface EmbeddedWork {
  readonly orders: number;
  /** How the demo's database was opened, in words. */
  readonly durability: string;
  readonly durable: DurableWork;
  readonly partnerCalls: number;
  /** SQLite's `total_changes()` over the run, the audit trigger's rows included. */
  readonly rowsWritten: number;
}

export interface WorkResult {
  readonly embedded: EmbeddedWork;
  /** This checkout's `sas host`, Agents called from activities (AGENT_MODE=activity, the sample's). */
  readonly azure: AzureWork;
}

/** `sas demo` on disk in a folder of its own, and the durable work its database kept. */
function embeddedWork(orders: number, timeoutSeconds: number): EmbeddedWork {
  const data = mkdtempSync(join(tmpdir(), "sas-work-"));
  try {
    const args = ["--import", "tsx", join(ROOT, "laptop/cli/main.ts"), "demo", "--orders", String(orders)];
    const child = spawnSync(
      process.execPath,
      [...args, "--data", data, "--timeout", String(timeoutSeconds), "--json"],
      { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    );
    const outcome = outcomeOf<DemoSummary>(
      {
        stdout: child.stdout,
        stderr: child.stderr,
        code: child.status,
        signal: child.signal,
        timedOut: false,
      },
      0,
      { timeoutSeconds, explain: explainDemo },
    );
    if (!outcome.ok) throw new Error(`sas demo: ${outcome.error}`);
    const { storage, partner } = outcome.value;
    return {
      orders,
      durability: `file, ${storage.journalMode.toUpperCase()}, synchronous=${storage.synchronous}`,
      durable: countDurableWork(join(data, "sas.sqlite")),
      partnerCalls: partner.calls,
      rowsWritten: storage.rowsWritten,
    };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

async function main(args: readonly string[]): Promise<number> {
  let values: { orders: string; "azure-orders": string; timeout: string };
  let orders: number;
  let azureOrders: number;
  let timeout: number;
  try {
    values = parseFlags(args, {
      orders: { type: "string", default: "5000" },
      "azure-orders": { type: "string", default: "1000" },
      timeout: { type: "string", default: "300" },
    });
    orders = integer("orders", values.orders, 1, 1_000_000);
    azureOrders = integer("azure-orders", values["azure-orders"], 1, 100_000);
    timeout = integer("timeout", values.timeout, 1, 86_400);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`work: ${line}\n`);
  log(`sas demo, ${orders} orders on disk`);
  const embedded = embeddedWork(orders, timeout);
  const azure = await measureAzureWork({ checkout: ROOT, orders: azureOrders, agentMode: "activity", log });
  const result: WorkResult = { embedded, azure };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    // The Cosmos DB client's timers may outlive the run: end once the result is out.
    (code) => process.stdout.write("", () => process.exit(code)),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}
