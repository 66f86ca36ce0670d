import { parseArgs } from "node:util";
import { createStatusLine } from "../embedded/status-line.js";
import { type Command, showUsage } from "./command.js";
import { agentFrom, COMMON, faultsFrom, integer, PIPELINE_FLAGS_USAGE, rate } from "./flags.js";

const USAGE = `usage: sas demo [flags]   (npm run demo -- [flags])

Runs the whole pipeline on the embedded host, submits a finite batch, waits until every order is
settled, prints a summary and checks the invariants; exits 1 if one is broken.

  --orders <n>                orders to submit (default 100)
  --timeout <seconds>         give up waiting after this long (default 300)
  --json                      print exactly one JSON object on stdout
  --log <file>                write every log line (JSON) to this file
  --data <dir>|:memory:       where the database lives (default a fresh temporary directory,
                              removed afterwards)
${PIPELINE_FLAGS_USAGE}`;

export const DEMO: Command = {
  name: "demo",
  summary: [
    "submit a finite batch, wait until every order is settled, print a summary and check",
    "the invariants; exits 1 if one is broken",
  ],
  usage: USAGE,
  run: demo,
};

async function demo(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      ...COMMON,
      orders: { type: "string" },
      timeout: { type: "string" },
      json: { type: "boolean" },
      log: { type: "string" },
    },
  });
  if (values.help) return showUsage(USAGE);
  const { runDemo } = await import("../embedded/demo.js");
  const { createWriteStream } = await import("node:fs");
  const logStream = values.log !== undefined ? createWriteStream(values.log) : undefined;
  const json = values.json === true;
  const summary = await runDemo({
    orders: integer(values, "orders", 100, 1, 1_000_000),
    faults: faultsFrom(values, { transient: 0, permanent: 0, slow: 0, lostReply: 0 }),
    duplicateReplies: rate(values, "duplicate-replies", 0),
    seed: integer(values, "seed", 1, -2_147_483_648, 2_147_483_647),
    agent: agentFrom(values),
    ...(values.data !== undefined ? { data: values.data } : {}),
    timeoutMs: integer(values, "timeout", 300, 1, 86_400) * 1_000,
    env: process.env,
    ...(logStream ? { log: (line: object) => logStream.write(`${JSON.stringify(line)}\n`) } : {}),
    ...(json ? {} : { progress: progressReporter() }),
  });
  logStream?.end();
  if (json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    process.stdout.write(`\n${JSON.stringify(summary, null, 2)}\n`);
    for (const violation of summary.invariants.violations)
      process.stdout.write(`invariant broken: ${violation}\n`);
  }
  const unsettled = summary.orders.Pending + summary.orders.Processing + summary.orders.Compensating;
  return summary.invariants.ok && unsettled === 0 ? 0 : 1;
}

/** The counts of each state on one status line on stderr, at most twice a second. */
function progressReporter(): (counts: Readonly<Record<string, number>>) => void {
  const line = createStatusLine(process.stderr);
  let lastShown = 0;
  return (counts) => {
    const now = Date.now();
    if (now - lastShown < 500) return;
    lastShown = now;
    line(
      Object.entries(counts)
        .map(([key, n]) => `${key} ${n}`)
        .join("  "),
    );
  };
}
