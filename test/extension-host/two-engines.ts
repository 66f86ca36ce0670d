import type * as df from "durable-functions";
import { EventType } from "../../laptop/durable/history.js";
import { LocalDurableRuntime } from "../../laptop/durable/local-durable-runtime.js";
import { startDurableExtensionApi } from "../../laptop/functions-host/durable-extension-api.js";
import {
  durableClientOn,
  startExtensionOnAzurite,
} from "../../laptop/functions-host/extension-on-azurite.js";
import { tableRows } from "../../laptop/stand-ins/azurite-tables.js";
import type { FunctionRegistry } from "../../laptop/worker/registration-capture.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";

/** One engine running an app, and the SDK's client on it (the binding data a durable client input gets). */
export interface EngineUnderTest {
  readonly name: "local" | "extension";
  readonly client: df.DurableClient;
  readonly clientData: unknown;
  readonly logger: MemoryLogger;
  /** An instance's runtime status and output, as the SDK's client reads them. */
  status(instanceId: string): Promise<{ runtimeStatus: string; output: unknown }>;
  /** What the orchestrator decided, in order, as the engine's history keeps it (see `decisionsOf`). */
  history(instanceId: string): Promise<string[]>;
  close(): Promise<void>;
}

async function statusOf(client: df.DurableClient, instanceId: string) {
  const status = await client.getStatus(instanceId);
  return { runtimeStatus: String(status.runtimeStatus), output: status.output };
}

/** The history events the orchestrator writes itself, by what it did: deterministic on either engine. */
const DECISIONS = [
  "TaskScheduled",
  "TimerCreated",
  "SubOrchestrationInstanceCreated",
  "EventSent",
  "ExecutionCompleted",
];

/**
 * An instance's decisions in order: each activity scheduled (by name), timer created, child started,
 * event sent, and its completion. What arrives (a task's result, a timer firing, an event) is left out:
 * which arrivals an engine records depends on when they came, not on the orchestration (a result or a
 * cancelled timer that comes once the race is decided, or after the instance completed); the output
 * says which side of each race won.
 */
export function decisionsOf(events: readonly { kind: string; name?: unknown }[]): string[] {
  return events
    .filter((event) => DECISIONS.includes(event.kind))
    .map((event) => (event.kind === "TaskScheduled" ? `${event.kind} ${String(event.name)}` : event.kind));
}

/** The local durable runtime on the system clock, behind its server of the extension's HTTP API. */
export async function startLocalEngine(registry: FunctionRegistry): Promise<EngineUnderTest> {
  const logger = new MemoryLogger();
  const db = openDatabase(":memory:");
  let clientData: unknown;
  // Activities with a durable client input get the API's binding data, as under sas host.
  const bindingData = (binding: { type: string }) =>
    binding.type === "durableClient" ? clientData : undefined;
  const runtime = LocalDurableRuntime.open({ db, clock: new SystemClock(), registry, logger, bindingData });
  const api = await startDurableExtensionApi({ runtime });
  clientData = api.clientData;
  const client = durableClientOn(api.clientData);
  const kinds = Object.fromEntries(Object.entries(EventType).map(([name, value]) => [value, name]));
  return {
    name: "local",
    client,
    clientData: api.clientData,
    logger,
    status: (instanceId) => statusOf(client, instanceId),
    history: async (instanceId) =>
      decisionsOf(
        runtime
          .historyOf(instanceId)
          .map((event) => ({ kind: kinds[event.EventType] ?? String(event.EventType), name: event.Name })),
      ),
    close: async () => {
      await api.close();
      await runtime.close();
      db.close();
    },
  };
}

/** Microsoft's extension in the extension host, on Azurite's Azure Storage of its own. */
export async function startExtensionEngine(
  registry: FunctionRegistry,
  hubName: string,
): Promise<EngineUnderTest> {
  const logger = new MemoryLogger();
  const extension = await startExtensionOnAzurite({ registry, hubName, logger });
  const { client } = extension;
  const { clientData } = extension.host.ready;
  return {
    name: "extension",
    client,
    clientData,
    logger,
    status: (instanceId) => statusOf(client, instanceId),
    history: async (instanceId) => {
      // The backend's History table as it is: the extension's API leaves an activity's TaskScheduled out.
      const rows = await tableRows(extension.tableEndpoint, `${hubName}History`, {
        filter: `PartitionKey eq '${instanceId}'`,
      });
      const events = rows
        .filter((row) => typeof row.EventType === "string")
        .sort((a, b) => String(a.RowKey).localeCompare(String(b.RowKey)))
        .map((row) => ({ kind: String(row.EventType), name: row.Name }));
      return decisionsOf(events);
    },
    close: extension.close,
  };
}
