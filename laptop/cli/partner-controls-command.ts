import { parseArgs } from "node:util";
import type { PartnerControlState } from "../../partner/control-contract.js";
import { HELP, integer, rate } from "./flags.js";
import { describeHostRefusal } from "./host-refusal.js";
import type { OrdersCommandIo } from "./orders-command.js";
import { UsageError } from "./usage-error.js";

const HOST_FLAGS_USAGE = `  --url <base>                the host (default http://127.0.0.1:7071)
  --key <key>                 in Azure: a function key (status) or the admin key (faults, outage)
  --token <token>             the embedded host's --api-token, when it was started with one (faults, outage)
  --json                      print the answer's JSON body as it came
`;

const STATUS_USAGE = `usage: sas partner status [--url <base>] [--key <key>] [--token <token>] [--json]

The partner's fault rates, its outage if one runs, and its last changes, through a running host
(sas start, sas host, or the Functions app with --key).
`;

const FAULTS_USAGE = `usage: sas partner faults [--transient <rate>] [--permanent <rate>] [--slow <rate>] [--lost-reply <rate>]

Sets the rates given (each 0 to 1, all four adding up to at most 1); the others stay as they are.
The partner journals the change.

  --transient <rate>          share of calls failing with 503/429
  --permanent <rate>          share of calls rejected with 422
  --slow <rate>               share of answers delayed past deadlines
  --lost-reply <rate>         share of answers lost after the effect applied
`;

const OUTAGE_USAGE = `usage: sas partner outage --seconds <n> | --end

  --seconds <n>               the partner refuses every operation (503 with Retry-After) for n
                              seconds from now, 1 to 86400; a running outage gets the new end
  --end                       ends a running outage now
`;

/** The actions' usage, each after the other, with the flags they share. */
export const PARTNER_ACTIONS_USAGE = `Against a running host (sas start, sas host, or the Functions app with --key), its partner's controls:

  sas partner status          the fault rates, the outage if one runs, the last changes
  sas partner faults [--transient <rate>] [--permanent <rate>] [--slow <rate>] [--lost-reply <rate>]
  sas partner outage --seconds <n> | --end
${HOST_FLAGS_USAGE}  exit status: 0 done, 1 refused or no partner controls (the reason on stderr), 2 usage or a bad request
`;

const ACTIONS = { status: STATUS_USAGE, faults: FAULTS_USAGE, outage: OUTAGE_USAGE } as const;
type Action = keyof typeof ACTIONS;

export function isPartnerAction(value: string | undefined): value is Action {
  return value !== undefined && Object.hasOwn(ACTIONS, value);
}

/** The HTTP request an action makes of the host's partner API. */
interface ControlsRequest {
  readonly method: "GET" | "POST" | "DELETE";
  readonly path: "/api/partner" | "/api/partner/faults" | "/api/partner/outage";
  readonly body?: Readonly<Record<string, number>>;
}

interface Parsed {
  readonly request: ControlsRequest;
  readonly url: string;
  readonly key: string | undefined;
  readonly token: string | undefined;
  readonly json: boolean;
}

/** `sas partner <action> ...`: reads or changes the partner's controls through the host's API. */
export async function partnerControlsCommand(
  action: Action,
  args: readonly string[],
  io: OrdersCommandIo,
): Promise<number> {
  const parsed = parseAction(action, args);
  if (parsed === null) {
    io.out(`${ACTIONS[action]}\n${HOST_FLAGS_USAGE}`);
    return 0;
  }
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (parsed.key) headers["x-functions-key"] = parsed.key;
  if (parsed.token) headers.Authorization = `Bearer ${parsed.token}`;
  const target = `${parsed.url.replace(/\/+$/, "")}${parsed.request.path}`;
  let response: Response;
  try {
    response = await io.fetch(target, {
      method: parsed.request.method,
      headers,
      ...(parsed.request.body ? { body: JSON.stringify(parsed.request.body) } : {}),
    });
  } catch (error) {
    io.err(`cannot reach ${parsed.url}: ${(error as Error).message}\n`);
    return 1;
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (parsed.json) io.out(`${JSON.stringify(body)}\n`);
  if (response.status === 200) {
    if (!parsed.json) io.out(describePartner(body as unknown as PartnerControlState));
    return 0;
  }
  io.err(describeHostRefusal(response.status, body, parsed));
  return response.status === 400 ? 2 : 1;
}

/** The request the action's flags ask for; null when they ask for help. */
function parseAction(action: Action, args: readonly string[]): Parsed | null {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      url: { type: "string" },
      key: { type: "string" },
      token: { type: "string" },
      json: { type: "boolean" },
      ...(action === "faults"
        ? {
            transient: { type: "string" },
            permanent: { type: "string" },
            slow: { type: "string" },
            "lost-reply": { type: "string" },
          }
        : {}),
      ...(action === "outage" ? { seconds: { type: "string" }, end: { type: "boolean" } } : {}),
      ...HELP,
    },
  });
  if (values.help) return null;
  const url = values.url ?? "http://127.0.0.1:7071";
  if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) URL; got ${url}`);
  const flags = values as Record<string, string | boolean | undefined>;
  const request =
    action === "status"
      ? ({ method: "GET", path: "/api/partner" } as const)
      : action === "faults"
        ? faultsRequest(flags)
        : outageRequest(flags);
  return { request, url, key: values.key, token: values.token, json: values.json === true };
}

const RATE_FLAGS = {
  transient: "transient",
  permanent: "permanent",
  slow: "slow",
  "lost-reply": "lostReply",
};

function faultsRequest(flags: Record<string, string | boolean | undefined>): ControlsRequest {
  const strings = flags as Record<keyof typeof RATE_FLAGS, string | undefined>;
  const body: Record<string, number> = {};
  for (const [flag, name] of Object.entries(RATE_FLAGS) as [keyof typeof RATE_FLAGS, string][]) {
    if (strings[flag] !== undefined) body[name] = rate(strings, flag, 0);
  }
  if (Object.keys(body).length === 0) {
    throw new UsageError(
      "sas partner faults needs at least one of --transient, --permanent, --slow, --lost-reply",
    );
  }
  return { method: "POST", path: "/api/partner/faults", body };
}

function outageRequest(flags: Record<string, string | boolean | undefined>): ControlsRequest {
  const seconds = flags.seconds as string | undefined;
  if (flags.end === true) {
    if (seconds !== undefined) throw new UsageError("give --seconds <n> or --end, not both");
    return { method: "DELETE", path: "/api/partner/outage" };
  }
  if (seconds === undefined) throw new UsageError("sas partner outage needs --seconds <n> or --end");
  return {
    method: "POST",
    path: "/api/partner/outage",
    body: { seconds: integer({ seconds }, "seconds", 0, 1, 86_400) },
  };
}

/** The control state as lines: the rates, the outage, then the changes, oldest first. */
export function describePartner(state: PartnerControlState): string {
  const lines = [
    `faults   ${ratesText(state.faults)}   (seed ${state.seed}, slow answers after ${state.slowMs} ms)`,
    `outage   ${state.outage ? `until ${state.outage.until} (since ${state.outage.since})` : "none"}`,
  ];
  const changes = Array.isArray(state.changes) ? state.changes : [];
  lines.push(changes.length === 0 ? "changes  none" : `changes  the last ${changes.length}, oldest first:`);
  for (const change of changes) {
    const what =
      change.change === "faults" && change.faults
        ? `faults: ${ratesText(change.faults)}`
        : change.change === "outage"
          ? `outage until ${change.until}`
          : "recovered";
    lines.push(`  ${change.at}  ${what}  (by ${change.by})`);
  }
  return `${lines.join("\n")}\n`;
}

function ratesText(faults: PartnerControlState["faults"] | undefined): string {
  if (!faults) return "unknown";
  return `transient ${faults.transient} · permanent ${faults.permanent} · slow ${faults.slow} · lost reply ${faults.lostReply}`;
}
