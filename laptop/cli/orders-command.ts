import { parseArgs } from "node:util";
import type { Command } from "./command.js";
import { HELP } from "./flags.js";
import { describeHostRefusal } from "./host-refusal.js";
import {
  describeAccepted,
  describeHistory,
  describeList,
  describeRecord,
  describeStats,
} from "./orders-output.js";
import { UsageError } from "./usage-error.js";

export const ORDERS_USAGE = `usage: sas orders <action> [flags] | sas stats [flags]

Against a running host: \`sas start\`, or the Functions app with --key.

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

export const ORDERS: Command = {
  name: "orders",
  summary: ["list orders, show one or its history, or resubmit or compensate it as an operator"],
  usage: ORDERS_USAGE,
  run: (args) => ordersCommand(args, processIo()),
};

/** The process's own output and network. */
export function processIo(): OrdersCommandIo {
  return {
    fetch,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  };
}

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
  if (request === null) {
    io.out(ORDERS_USAGE);
    return 0;
  }
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
  io.err(describeHostRefusal(response.status, body, request));
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

/** The request the command line asks for; null when it asks for help. */
function parseRequest(args: readonly string[]): Request | null {
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
      ...HELP,
    },
  });
  if (values.help) return null;
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
