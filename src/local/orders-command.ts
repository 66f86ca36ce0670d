import { parseArgs } from "node:util";
import { UsageError } from "./usage-error.js";

export const ORDERS_USAGE = `orders (against a running host: \`sas start\`, or the Functions app with --key):
  sas orders show <orderId>
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

const ACTIONS = ["show", "resubmit", "compensate"] as const;
type Action = (typeof ACTIONS)[number];

interface Request {
  readonly action: Action;
  readonly orderId: string;
  readonly url: string;
  readonly key: string | undefined;
  readonly token: string | undefined;
  readonly json: boolean;
  readonly operator?: string;
  readonly reason?: string;
}

/** `sas orders ...`: one record, or an operator command, over the orders API. */
export async function ordersCommand(args: readonly string[], io: OrdersCommandIo): Promise<number> {
  const request = parseRequest(args);
  const path = `/api/orders/${encodeURIComponent(request.orderId)}`;
  const target = `${request.url.replace(/\/+$/, "")}${path}${request.action === "show" ? "" : `/${request.action}`}`;
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (request.key) headers["x-functions-key"] = request.key;
  if (request.token) headers.Authorization = `Bearer ${request.token}`;
  let response: Response;
  try {
    response =
      request.action === "show"
        ? await io.fetch(target, { headers })
        : await io.fetch(target, {
            method: "POST",
            headers,
            body: JSON.stringify({ operator: request.operator, reason: request.reason }),
          });
  } catch (error) {
    io.err(`cannot reach ${request.url}: ${(error as Error).message}\n`);
    return 1;
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (request.json) io.out(`${JSON.stringify(body)}\n`);
  if (response.status === 200 || response.status === 202) {
    if (!request.json) io.out(request.action === "show" ? describeRecord(body) : describeAccepted(body));
    return 0;
  }
  io.err(`${describeRefusal(response.status, body)}\n`);
  return response.status === 400 ? 2 : 1;
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
      json: { type: "boolean" },
    },
  });
  const [action, orderId, ...extra] = positionals;
  if (!ACTIONS.includes(action as Action)) {
    throw new UsageError(`sas orders needs one of ${ACTIONS.join(", ")}; got ${action ?? "nothing"}`);
  }
  if (orderId === undefined || extra.length > 0)
    throw new UsageError(`sas orders ${action} needs one order id`);
  const url = values.url ?? "http://127.0.0.1:7071";
  if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) URL; got ${url}`);
  const base = {
    action: action as Action,
    orderId,
    url,
    key: values.key,
    token: values.token,
    json: values.json === true,
  };
  if (action === "show") return base;
  if (!values.operator?.trim()) throw new UsageError(`sas orders ${action} needs --operator <name>`);
  if (!values.reason?.trim()) throw new UsageError(`sas orders ${action} needs --reason <text>`);
  return { ...base, operator: values.operator, reason: values.reason };
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
