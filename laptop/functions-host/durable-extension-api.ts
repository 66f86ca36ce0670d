import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type JsonAnswer, sendJson } from "../../src/adapters/web/json-response.js";
import { listenOrRefuse } from "../../src/adapters/web/listen-or-refuse.js";
import { readBodyUpTo } from "../../src/adapters/web/request-body.js";
import {
  FINISHED_STATUSES,
  InstanceAlreadyRunningError,
  type OrchestrationStatus,
  RUNTIME_STATUSES,
  type RuntimeStatus,
} from "../../src/ports/durable-client.js";
import type { InstanceFilter, LocalDurableRuntime } from "../durable/local-durable-runtime.js";
import type { OverridableStates } from "./host-config.js";

/**
 * The HTTP API the Durable Functions extension serves to the SDK's client, answered from the local
 * durable runtime: what `df.getClient(context)` talks to under `func start`, so the Azure app's durable
 * adapter runs through the real SDK client code path on a machine without the Functions host.
 *
 * The SDK calls the extension at `rpcBaseUrl` when the binding data gives one (every current
 * extension does): `orchestrators/{name}[/{id}]` to start, `instances/{id}` to read and purge,
 * `instances/` to query, `instances/{id}/raiseEvent/{event}` and `instances/{id}/terminate`. Status
 * codes follow the extension's HTTP API: a running instance's status is 202, a completed one's 200, a
 * failed or terminated one's 400 (with the failure or the reason as its output); an event or a
 * termination for a finished instance is 410 Gone; anything unknown is 404.
 *
 * Starting under an id that exists follows host.json's `overridableExistingInstanceStates`, as the
 * extension does: with `NonRunningStates` (its default) an instance that is Pending or Running is
 * refused with 409 Conflict and the message the extension gives, a finished one is replaced; with
 * `AnyState` a running one is replaced too (here: terminated, then started anew under the same id).
 * The Azure adapter reads the status first and never asks to start over a running instance.
 */
export interface DurableExtensionApi {
  /** The binding data the extension gives a `durableClient` input: hand it to `df.getClient` via the context. */
  readonly clientData: DurableClientData;
  readonly url: string;
  /** Serves from this runtime; until one is given, requests are answered 503. */
  attach(runtime: LocalDurableRuntime): void;
  /** Answers one request, as this API's own server does: for a host that serves the webhooks on its port. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

export interface DurableClientData {
  readonly taskHubName: string;
  readonly creationUrls: Readonly<Record<string, string>>;
  readonly managementUrls: Readonly<Record<string, string>>;
  readonly baseUrl: string;
  readonly requiredQueryStringParameters: string;
  readonly rpcBaseUrl: string;
}

export interface DurableExtensionApiOptions {
  /**
   * Absent, the API listens first and serves once `attach` gives it the runtime: a host whose
   * activities take a durable client needs the binding data before the runtime resumes any of them.
   */
  readonly runtime?: LocalDurableRuntime;
  /** Default 0: any free port. */
  readonly port?: number;
  readonly host?: string;
  readonly taskHubName?: string;
  /**
   * The key the management links carry (`code=`), as the extension puts its system key there: the
   * key a host that serves the webhooks checks. Default `local`, for this API's own loopback port.
   */
  readonly webhookKey?: string;
  /** host.json's `extensions.durableTask.overridableExistingInstanceStates`; default `NonRunningStates`. */
  readonly overridableExistingInstanceStates?: OverridableStates;
}

const ROOT = "/durabletask/";
/**
 * Where the management links the SDK hands out point (`createCheckStatusResponse` and the
 * `statusQueryGetUri` a starter returns): the extension serves the same API there.
 */
const WEBHOOKS_ROOT = "/runtime/webhooks/durabletask/";
const ID_PLACEHOLDER = "INSTANCEID";
/** Inputs and event data travel in these bodies; the extension's own limit is far larger than any here. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export async function startDurableExtensionApi(
  options: DurableExtensionApiOptions,
): Promise<DurableExtensionApi> {
  let runtime = options.runtime;
  const overridable = options.overridableExistingInstanceStates ?? "NonRunningStates";
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (!runtime) {
      req.resume();
      sendJson(res, failed(503, "the durable runtime is starting"));
      return;
    }
    void answer(runtime, req, overridable)
      .then((reply) => sendJson(res, reply))
      .catch((error: unknown) => sendJson(res, failed(500, error)));
  };
  const server = createServer(handle);
  const host = options.host ?? "127.0.0.1";
  await listenOrRefuse(server, { port: options.port ?? 0, host });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host}:${port}`;
  return {
    url,
    clientData: clientDataFor(url, options.taskHubName ?? "SasLocalHub", options.webhookKey ?? "local"),
    handle,
    attach: (attached) => {
      runtime = attached;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Binding data in the extension's shape; the SDK uses `rpcBaseUrl` and needs the rest to be present. */
function clientDataFor(url: string, taskHubName: string, key: string): DurableClientData {
  const webhooks = `${url}${WEBHOOKS_ROOT.slice(0, -1)}`;
  const code = encodeURIComponent(key);
  const query = `taskHub=${taskHubName}&connection=Storage&code=${code}`;
  const instance = `${webhooks}/instances/${ID_PLACEHOLDER}`;
  return {
    taskHubName,
    creationUrls: {
      createNewInstancePostUri: `${webhooks}/orchestrators/{functionName}[/{instanceId}]?code=${code}`,
      createAndWaitOnNewInstancePostUri: `${webhooks}/orchestrators/{functionName}[/{instanceId}]?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}&code=${code}`,
    },
    managementUrls: {
      id: ID_PLACEHOLDER,
      statusQueryGetUri: `${instance}?${query}`,
      sendEventPostUri: `${instance}/raiseEvent/{eventName}?${query}`,
      terminatePostUri: `${instance}/terminate?reason={text}&${query}`,
      purgeHistoryDeleteUri: `${instance}?${query}`,
    },
    baseUrl: webhooks,
    requiredQueryStringParameters: query,
    rpcBaseUrl: `${url}${ROOT}`,
  };
}

async function answer(
  runtime: LocalDurableRuntime,
  req: IncomingMessage,
  overridable: OverridableStates,
): Promise<JsonAnswer> {
  const url = new URL(req.url ?? "/", "http://local");
  const root = [ROOT, WEBHOOKS_ROOT].find((prefix) => url.pathname.startsWith(prefix));
  if (!root) return failed(404, `no route ${url.pathname}`);
  let parts: string[];
  try {
    parts = url.pathname.slice(root.length).split("/").map(decodeURIComponent);
  } catch {
    return failed(400, `the path ${url.pathname} is not validly percent-encoded`);
  }
  const bytes = await readBodyUpTo(req, MAX_BODY_BYTES);
  const body = bytes?.toString("utf8");
  if (body === undefined) return failed(413, `a body is at most ${MAX_BODY_BYTES} bytes`);
  const [collection, id, action, argument] = parts;
  const method = req.method ?? "GET";

  if (collection === "orchestrators" && method === "POST" && id) {
    const instanceId = action || randomUUID().replaceAll("-", "");
    return start(runtime, { name: id, instanceId, body }, overridable);
  }
  if (collection === "entities" && id && action !== undefined && argument === undefined) {
    return entity(runtime, method, { name: id, key: action }, url.searchParams, body);
  }
  if (collection !== "instances") return failed(404, `no route ${url.pathname}`);
  if (!id) {
    const filter = filterOf(url.searchParams);
    if (typeof filter === "string") return failed(400, filter);
    if (method === "GET")
      return { status: 200, body: (await runtime.listStatuses(filter)).map(toExtensionStatus) };
    if (method === "DELETE") {
      const purged = await runtime.purgeMatching(filter);
      return purged > 0
        ? { status: 200, body: { instancesDeleted: purged } }
        : failed(404, "no finished instance matches");
    }
    return failed(405, `${method} instances/ is not served here`);
  }
  if (method === "GET" && !action) return statusOf(await runtime.getStatus(id), id);
  if (method === "DELETE" && !action) {
    const deleted = await runtime.purge(id);
    return deleted
      ? { status: 200, body: { instancesDeleted: 1 } }
      : failed(404, `no instance with id ${id}`);
  }
  if (method === "POST" && action === "raiseEvent" && argument) {
    const data = parseJson(body);
    if (!data.ok) return failed(400, "the event data is not JSON");
    const raised = await runtime.raiseEvent(id, argument, data.value);
    if (raised.delivered) return { status: 202, body: null };
    return raised.reason === "notFound"
      ? failed(404, `no instance with id ${id}`)
      : failed(410, `instance ${id} has finished`);
  }
  if (method === "POST" && action === "terminate") {
    const status = await runtime.getStatus(id);
    if (!status) return failed(404, `no instance with id ${id}`);
    if (FINISHED_STATUSES.includes(status.runtimeStatus)) return failed(410, `instance ${id} has finished`);
    await runtime.terminate(id, url.searchParams.get("reason") ?? "");
    return { status: 202, body: null };
  }
  return failed(404, `no route ${method} ${url.pathname}`);
}

/**
 * `orchestrators/{name}/{id}`: starts an instance, over an existing one as `overridable` allows. A
 * refusal is the extension's: 409 and the message of the Azure Storage provider's
 * OrchestrationAlreadyExistsException, which the SDK's `startNew` rejects with as "The operation
 * failed with an unexpected status code: 409. Details: {...}".
 */
async function start(
  runtime: LocalDurableRuntime,
  request: { readonly name: string; readonly instanceId: string; readonly body: string },
  overridable: OverridableStates,
): Promise<JsonAnswer> {
  const { name, instanceId, body } = request;
  const input = body === "" ? { ok: true as const, value: undefined } : parseJson(body);
  if (!input.ok) return failed(400, "the input is not JSON");
  const existing = await runtime.getStatus(instanceId);
  if (existing && !FINISHED_STATUSES.includes(existing.runtimeStatus)) {
    if (overridable === "NonRunningStates") return alreadyExists(existing.runtimeStatus);
    await runtime.terminate(instanceId, "replaced by a new instance started under its id");
  }
  try {
    await runtime.startNew(name, { instanceId, input: input.value });
  } catch (error) {
    return error instanceof InstanceAlreadyRunningError ? alreadyExists(error.status) : failed(400, error);
  }
  return { status: 202, body: { id: instanceId } };
}

function alreadyExists(status: RuntimeStatus): JsonAnswer {
  return failed(409, `An Orchestration instance with the status ${status} already exists.`);
}

/** `entities/{name}/{key}`: read the state (GET), or signal an operation (POST `?op=`, the body its input). */
async function entity(
  runtime: LocalDurableRuntime,
  method: string,
  key: { name: string; key: string },
  params: URLSearchParams,
  body: string,
): Promise<JsonAnswer> {
  if (method === "GET") {
    const found = await runtime.readEntityState(key);
    return found
      ? { status: 200, body: found.state ?? null }
      : failed(404, `no entity @${key.name}@${key.key}`);
  }
  if (method !== "POST") return failed(405, `${method} entities/ is not served here`);
  const operation = params.get("op");
  if (!operation) return failed(400, "a signal names its operation: ?op=");
  const input = body === "" ? { ok: true as const, value: undefined } : parseJson(body);
  if (!input.ok) return failed(400, "the operation's input is not JSON");
  await runtime.signalEntity(key, operation, input.value);
  return { status: 202, body: null };
}

/** The query string of `instances/` as the SDK writes it for `getStatusBy` and `purgeInstanceHistoryBy`. */
function filterOf(params: URLSearchParams): InstanceFilter | string {
  const times: { createdFrom?: Date; createdBefore?: Date } = {};
  for (const [key, field] of [
    ["createdTimeFrom", "createdFrom"],
    ["createdTimeTo", "createdBefore"],
  ] as const) {
    const raw = params.get(key);
    if (raw === null) continue;
    const time = new Date(raw);
    if (Number.isNaN(time.getTime())) return `${key} ${raw} is not a time`;
    times[field] = time;
  }
  // States this runtime has no word for (Suspended, Canceled, ...) match none of its instances.
  const asked = params.get("runtimeStatus")?.split(",");
  const statuses = asked && RUNTIME_STATUSES.filter((status) => asked.includes(status));
  return { ...times, ...(statuses ? { statuses } : {}) };
}

function statusOf(status: OrchestrationStatus | undefined, id: string): JsonAnswer {
  if (!status) return failed(404, `no instance with id ${id}`);
  const code =
    status.runtimeStatus === "Completed"
      ? 200
      : status.runtimeStatus === "Failed" || status.runtimeStatus === "Terminated"
        ? 400
        : 202;
  return { status: code, body: toExtensionStatus(status) };
}

/** The status as the extension serialises it: a failed instance's output is its failure. */
function toExtensionStatus(status: OrchestrationStatus) {
  return {
    name: status.name,
    instanceId: status.instanceId,
    runtimeStatus: status.runtimeStatus,
    input: status.input ?? null,
    customStatus: status.customStatus ?? null,
    output: (status.runtimeStatus === "Failed" ? status.failure : status.output) ?? null,
    createdTime: status.createdTime.toISOString(),
    lastUpdatedTime: status.lastUpdatedTime.toISOString(),
  };
}

function failed(status: number, reason: unknown): JsonAnswer {
  const message = reason instanceof Error ? reason.message : String(reason);
  return { status, body: { Message: message } };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
