import { parseArgs } from "node:util";
import { UsageError } from "./usage-error.js";

export const ORDERS_USAGE = `orders (against a running host: \`sas start\`, or the Functions app with --key):
  sas stats                   the orders in each state, the attempts in flight, the oldest Pending
                              order, dead-lettered and parked messages, the last Supervisor scan,
                              and the orders finished in each of the last five minutes
  sas orders list [--state <state>] [--limit <n>] [--continuation <token>]
  sas orders show <orderId>
  sas orders history <orderId>  every transition of the order, oldest first
  sas orders resubmit <orderId> --operator <name> --reason <text>
  sas orders compensate <orderId> --operator <name> --reason <text>
  --url <base>                the host (default http://127.0.0.1:7071)
  --key <key>                 a function key (show) or the admin key (resubmit, compensate) in Azure
  --token <token>             the embedded host's --api-token, when it was started with one
  --json                      print the answer's JSON body as it came
  exit status: 0 done, 1 refused or not found (the reason on stderr), 2 usage or a bad request
`;

/** Where the command writes, and how it reaches the host: the process's own, or a test's. */
export interface OrdersCommandIo {
  readonly fetch: typeof fetch;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

const ACTIONS = ["list", "show", "history", "resubmit", "compensate", "stats"] as const;
type Action = (typeof ACTIONS)[number];

function isAction(value: string | undefined): value is Action {
  return (ACTIONS as readonly (string | undefined)[]).includes(value);
}

interface Request {
  readonly action: Action;
  /** The order (show and the commands), or the list's query string. */
  readonly orderId: string;
  readonly listQuery: string;
  readonly url: string;
  readonly key: string | undefined;
  readonly token: string | undefined;
  readonly json: boolean;
  readonly operator?: string;
  readonly reason?: string;
}

/** `sas orders ...`: a list, one record, or an operator command, over the orders API. */
export async function ordersCommand(args: readonly string[], io: OrdersCommandIo): Promise<number> {
  const request = parseRequest(args);
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (request.key) headers["x-functions-key"] = request.key;
  if (request.token) headers.Authorization = `Bearer ${request.token}`;
  const command = request.action === "resubmit" || request.action === "compensate";
  let response: Response;
  try {
    response = command
      ? await io.fetch(targetOf(request), {
          method: "POST",
          headers,
          body: JSON.stringify({ operator: request.operator, reason: request.reason }),
        })
      : await io.fetch(targetOf(request), { headers });
  } catch (error) {
    io.err(`cannot reach ${request.url}: ${(error as Error).message}\n`);
    return 1;
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (request.json) io.out(`${JSON.stringify(body)}\n`);
  if (response.status === 200 || response.status === 202) {
    if (!request.json) io.out(DESCRIBE[request.action](body));
    return 0;
  }
  io.err(`${describeRefusal(response.status, body)}\n`);
  return response.status === 400 ? 2 : 1;
}

function targetOf(request: Request): string {
  const root = request.url.replace(/\/+$/, "");
  if (request.action === "stats") return `${root}/api/stats`;
  const base = `${root}/api/orders`;
  if (request.action === "list") return request.listQuery ? `${base}?${request.listQuery}` : base;
  const order = `${base}/${encodeURIComponent(request.orderId)}`;
  return request.action === "show" ? order : `${order}/${request.action}`;
}

function parseRequest(args: readonly string[]): Request {
  const { values, positionals } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      key: { type: "string" },
      token: { type: "string" },
      operator: { type: "string" },
      reason: { type: "string" },
      state: { type: "string" },
      limit: { type: "string" },
      continuation: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const [action, orderId, ...extra] = positionals;
  if (!isAction(action)) {
    throw new UsageError(`sas orders needs one of ${ACTIONS.join(", ")}; got ${action ?? "nothing"}`);
  }
  const url = values.url ?? "http://127.0.0.1:7071";
  if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) URL; got ${url}`);
  const listFlags = { state: values.state, limit: values.limit, continuation: values.continuation };
  const base = {
    action,
    orderId: orderId ?? "",
    listQuery: new URLSearchParams(
      Object.entries(listFlags).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ).toString(),
    url,
    key: values.key,
    token: values.token,
    json: values.json === true,
  };
  if (action === "list" || action === "stats") {
    if (orderId !== undefined)
      throw new UsageError(`${action === "list" ? "sas orders list" : "sas stats"} takes no order id`);
    if (action === "stats" && base.listQuery)
      throw new UsageError("--state, --limit and --continuation are for sas orders list");
    return base;
  }
  if (base.listQuery) throw new UsageError(`--state, --limit and --continuation are for sas orders list`);
  if (orderId === undefined || extra.length > 0)
    throw new UsageError(`sas orders ${action} needs one order id`);
  if (action === "show" || action === "history") return base;
  if (!values.operator?.trim()) throw new UsageError(`sas orders ${action} needs --operator <name>`);
  if (!values.reason?.trim()) throw new UsageError(`sas orders ${action} needs --reason <text>`);
  return { ...base, operator: values.operator, reason: values.reason };
}

const DESCRIBE: Readonly<Record<Action, (body: Record<string, unknown>) => string>> = {
  list: describeList,
  show: describeRecord,
  history: describeHistory,
  resubmit: describeAccepted,
  compensate: describeAccepted,
  stats: describeStats,
};

/** One line per transition: when, who, what, the state it left and reached, and its step and failure code. */
function describeHistory(body: Record<string, unknown>): string {
  const earlier = body.earlier as { entries?: number; since?: string; until?: string } | null;
  const entries = (Array.isArray(body.entries) ? body.entries : []) as Record<string, unknown>[];
  const lines = entries.map((e) =>
    [e.at, `#${e.attempt}`, e.actor, e.command, `${e.from} -> ${e.to}`, e.step, e.code]
      .filter((cell) => cell !== null && cell !== undefined)
      .join("  "),
  );
  if (earlier)
    lines.unshift(`(${earlier.entries} earlier transitions, ${earlier.since} to ${earlier.until})`);
  return `${lines.join("\n")}\n`;
}

interface CappedCount {
  readonly count: number;
  readonly capped: boolean;
}

interface StatsBody {
  readonly counts?: Record<string, number>;
  readonly inFlight?: { processing: number; max: number };
  readonly oldestPending?: { orderId: string; since: string; ageMs: number } | null;
  readonly messages?: {
    deadLettered: Record<string, CappedCount>;
    parked: CappedCount;
    countedUpTo: number;
    countedAt: string;
  } | null;
  readonly lastScan?: {
    holder: string;
    finishedAt: string;
    found: Record<string, number | boolean>;
    cost: { requestUnits: number; durationMs: number; pages: number };
  } | null;
  readonly throughput?: { finishedPerMinute: number[]; perSecondLastMinute: number; until: string };
  readonly unavailable?: string[];
}

/** One line per figure, its label in an aligned first column. */
function describeStats(raw: Record<string, unknown>): string {
  const body = raw as StatsBody;
  const unavailable = (figure: string) =>
    body.unavailable?.includes(figure) ? "unavailable (the host could not read it; see its log)" : undefined;
  const { messages, lastScan, throughput, oldestPending } = body;
  const rows: [string, string][] = [
    [
      "counts",
      Object.entries(body.counts ?? {})
        .map(([state, n]) => `${state} ${n}`)
        .join(" · "),
    ],
    ["in flight", `${body.inFlight?.processing}/${body.inFlight?.max}`],
    [
      "oldest pending",
      oldestPending
        ? `${oldestPending.orderId}, waiting ${durationText(oldestPending.ageMs)} (since ${oldestPending.since})`
        : "none",
    ],
    [
      "dead-lettered",
      unavailable("messages") ??
        Object.entries(messages?.deadLettered ?? {})
          .map(([queue, n]) => `${queue} ${countText(n)}`)
          .join(" · "),
    ],
    ["parked", unavailable("messages") ?? (messages ? countText(messages.parked) : "")],
    ["last scan", unavailable("lastScan") ?? (lastScan ? scanText(lastScan) : "none recorded yet")],
    [
      "finished/min",
      throughput
        ? `${throughput.finishedPerMinute.join(" · ")} (oldest first, to ${throughput.until}; ${throughput.perSecondLastMinute}/s over the last minute)`
        : "",
    ],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows
    .map(([label, text]) => `${label.padEnd(width)}  ${text}`)
    .join("\n")
    .concat("\n");
}

/** A capped count reads "1000+": there may be more. */
function countText(n: CappedCount): string {
  return `${n.count}${n.capped ? "+" : ""}`;
}

function scanText(scan: NonNullable<StatsBody["lastScan"]>): string {
  const { found, cost } = scan;
  const counts = ["scanned", "resets", "toError", "toCompensation", "stalled", "lostRaces"]
    .map((field) => `${field} ${found[field]}`)
    .join(" · ");
  const flags = [found.truncated ? "truncated" : "", found.leaseLost ? "lease lost" : ""].filter(Boolean);
  const spent = `${cost.pages} page(s), ${cost.requestUnits} RU, ${Math.round(cost.durationMs)} ms`;
  return `${scan.finishedAt} by ${scan.holder}: ${[counts, ...flags].join(" · ")}; ${spent}`;
}

/** "3h 5m", "2m 0s", "45s": an age to the second. */
function durationText(ms: number): string {
  const seconds = Math.floor(ms / 1_000);
  const [h, m, s] = [Math.floor(seconds / 3_600), Math.floor((seconds % 3_600) / 60), seconds % 60];
  if (h > 0) return `${h}h ${m}m`;
  return m > 0 ? `${m}m ${s}s` : `${s}s`;
}

/** One aligned line per order, then the continuation to pass for the next page. */
function describeList(body: Record<string, unknown>): string {
  const items = (Array.isArray(body.items) ? body.items : []) as Record<string, unknown>[];
  const rows = items.map((item) => {
    const lastError = item.lastError as { code?: string } | null | undefined;
    return [String(item.orderId), String(item.processState), String(item.updatedAt), lastError?.code ?? ""];
  });
  const widths = [0, 1, 2].map((column) => Math.max(0, ...rows.map((row) => row[column]?.length ?? 0)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
  if (lines.length === 0) lines.push("no orders");
  if (typeof body.continuation === "string") lines.push(`more: --continuation ${body.continuation}`);
  return `${lines.join("\n")}\n`;
}

function describeRecord(record: Record<string, unknown>): string {
  const steps = Array.isArray(record.steps)
    ? record.steps.map((s: { name?: string; status?: string }) => `${s.name} ${s.status}`).join(", ")
    : "";
  const lastError = record.lastError as { code?: string; message?: string } | null | undefined;
  const lines = [
    `${record.orderId}  ${record.processState}  attempt ${record.attempt}  failures ${record.failureCount}`,
    `  steps: ${steps}`,
    ...(lastError ? [`  last error: ${lastError.code}: ${lastError.message}`] : []),
  ];
  return `${lines.join("\n")}\n`;
}

function describeAccepted(body: Record<string, unknown>): string {
  return `${body.command} ${body.orderId}: accepted, now ${body.processState}\n`;
}

function describeRefusal(status: number, body: Record<string, unknown>): string {
  const issues = Array.isArray(body.issues)
    ? body.issues.map((i: { field?: string; message?: string }) => `${i.field}: ${i.message}`).join("; ")
    : "";
  const detail = body.message ?? issues ?? "";
  return `${status} ${body.error ?? "error"}${detail ? `: ${detail}` : ""}`;
}
