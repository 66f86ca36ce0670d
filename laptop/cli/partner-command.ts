import { parseArgs } from "node:util";
import { PARTNER_ACCESS_KEY_SETTING } from "../../src/config/names.js";
import { type Command, showUsage, untilStopped } from "./command.js";
import { COMMON, FAULT_FLAGS_USAGE, faultsFrom, integer } from "./flags.js";
import { processIo } from "./orders-command.js";
import {
  isPartnerAction,
  PARTNER_ACTIONS_USAGE,
  partnerControlsCommand,
} from "./partner-controls-command.js";

const SERVICE_USAGE = `usage: sas partner [flags]

Runs only the simulated partner service, for the Functions host's PARTNER_URL or for
sas start --partner-url. With ${PARTNER_ACCESS_KEY_SETTING} set in the environment, every call but
GET /health must carry it as x-partner-key (give the host the same setting); without, it is open.

  --port <n>                  HTTP port (default 7072)
  --ledger <file>             keep the idempotency records and the effect ledger in this SQLite
                              file, so they survive restarts (default: in memory)
${FAULT_FLAGS_USAGE}  --seed <n>                  seed of every fault decision                     (integer)
`;

const USAGE = `${SERVICE_USAGE}
usage: sas partner status | faults | outage [flags]   (sas partner <action> --help for one)

${PARTNER_ACTIONS_USAGE}`;

export const PARTNER: Command = {
  name: "partner",
  summary: [
    "run only the simulated partner service (for the Functions host's PARTNER_URL); or, with",
    "status, faults or outage, read or change a running host's partner (its faults, an outage)",
  ],
  usage: USAGE,
  run: (args) => {
    const [action, ...rest] = args;
    return isPartnerAction(action) ? partnerControlsCommand(action, rest, processIo()) : partner(args);
  },
};

/** `sas partner [flags]`: the simulated partner service, until stopped. */
async function partner(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: { ...COMMON, port: { type: "string" }, ledger: { type: "string" } },
  });
  if (values.help) return showUsage(USAGE);
  const { startPartnerService } = await import("../../partner/partner-service.js");
  const { openLedgerFile } = await import("../../partner/ledger-file.js");
  const { SystemClock } = await import("../../src/adapters/clock/system-clock.js");
  const { JsonLogger } = await import("../../src/adapters/logging/json-logger.js");
  const { DEMO_SLOW_MS } = await import("../embedded/embedded-stack.js");
  const port = integer(values, "port", 7072, 0, 65_535);
  const faults = faultsFrom(values, { transient: 0, permanent: 0, slow: 0, lostReply: 0 });
  const seed = integer(values, "seed", 7, -2_147_483_648, 2_147_483_647);
  const accessKey = process.env[PARTNER_ACCESS_KEY_SETTING]?.trim();
  const file = values.ledger !== undefined ? openLedgerFile(values.ledger) : undefined;
  const service = await startPartnerService({
    ...(accessKey ? { accessKey } : {}),
    port,
    portRemedy: "choose another with --port",
    faults,
    seed,
    slowMs: DEMO_SLOW_MS,
    ...(file ? { ledger: file.ledger } : {}),
    clock: new SystemClock(),
    logger: JsonLogger.toStream(process.stderr),
  }).catch((error: unknown) => {
    // A taken port (reported by main, exit 2) or any other failure leaves the ledger file closed.
    file?.close();
    throw error;
  });
  const kept = file
    ? `ledger in ${values.ledger} (${file.restoredEvents} events restored)`
    : "ledger in memory (give --ledger <file> to keep it across restarts)";
  const keyed = accessKey
    ? `calls need the access key in ${PARTNER_ACCESS_KEY_SETTING}`
    : `open to every caller (set ${PARTNER_ACCESS_KEY_SETTING} for an access key)`;
  process.stdout.write(
    `simulated partner on ${service.url}; ${kept}; ${keyed}; GET ${service.url}/ledger shows it. Set PARTNER_URL (or sas start --partner-url) to it. Ctrl+C stops it.\n`,
  );
  await untilStopped();
  await service.close();
  process.stdout.write(`${JSON.stringify(service.ledgerData().totals)}\n`);
  file?.close();
  return 0;
}
