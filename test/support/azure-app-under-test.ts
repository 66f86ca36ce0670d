import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LocalDurableRuntime } from "../../laptop/durable/local-durable-runtime.js";
import { newKeyRingText } from "../../laptop/embedded/key-file.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteLease } from "../../laptop/sqlite/sqlite-lease.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { SqliteOrdersRepository } from "../../laptop/sqlite/sqlite-orders-repository.js";
import { SqliteScanJournal } from "../../laptop/sqlite/sqlite-scan-journal.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import {
  type CapturedFunction,
  captureRegistrations,
  type FunctionRegistry,
} from "../../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { LoggingAlertSink } from "../../src/adapters/logging/logging-alert-sink.js";
import { QueueStatusNotifier } from "../../src/adapters/messaging/queue-status-notifier.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { loadAzureSettings } from "../../src/config/azure-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import { QUEUE_NAMES } from "../../src/config/names.js";
import type { AgentRequest, AgentResponse } from "../../src/domain/agent-messages.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { OrderMessage } from "../../src/domain/order.js";
import { registerFunctions } from "../../src/functions/app.js";
import { type AzureApp, createAzureApp } from "../../src/functions/azure-app.js";
import type { AzureServices } from "../../src/functions/azure-services.js";
import type { DurableClient } from "../../src/ports/durable-client.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";
import { orderMessage } from "../pipeline/pipeline-harness.js";

const ROOT = join(import.meta.dirname, "../..");
export const SAMPLE = JSON.parse(readFileSync(join(ROOT, "local.settings.sample.json"), "utf8")) as {
  Values: Record<string, string>;
};

export function order(orderId: string, overrides: Partial<OrderMessage> = {}): OrderMessage {
  return orderMessage(orderId, { replyTo: QUEUE_NAMES.orderStatus, ...overrides });
}

/** The Azure app wired to SQLite stand-ins, with every registration captured as the host would see it. */
export class AppUnderTest {
  readonly db: EmbeddedDatabase = openDatabase(":memory:");
  readonly clock = new VirtualClock(new Date("2026-01-01T00:00:00Z"));
  readonly logger = new MemoryLogger();
  readonly agentCalls: AgentRequest[] = [];
  readonly states = new SqliteStateStore(this.db);
  readonly orders = new SqliteOrdersRepository(this.db, this.clock);
  readonly queues = new Map<string, SqliteMessageQueue>();
  registry!: FunctionRegistry;
  runtime!: LocalDurableRuntime;
  app!: AzureApp;

  queue = (name: string): SqliteMessageQueue => {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new SqliteMessageQueue(this.db, this.clock, name);
      this.queues.set(name, queue);
    }
    return queue;
  };

  constructor(
    private readonly env: Record<string, string> = {},
    private readonly options: {
      readonly telemetry?: Telemetry;
      /**
       * The durable client an invocation's binding gives, made from the local runtime (default: the
       * runtime itself); null: invocations have no durable client binding, as the SDK then finds.
       */
      readonly durableClient?: ((runtime: LocalDurableRuntime) => DurableClient) | null;
    } = {},
  ) {}

  async open(): Promise<void> {
    const services: AzureServices = {
      settings: loadAzureSettings({
        ...SAMPLE.Values,
        [DATA_PROTECTION_KEYS_SETTING]: newKeyRingText(this.clock.now()),
        ...this.env,
      }),
      states: this.states,
      stateReadModel: this.states,
      orders: this.orders,
      lease: new SqliteLease(this.db, this.clock, "supervisor"),
      scanJournal: new SqliteScanJournal(this.db),
      queue: this.queue,
      notifier: new QueueStatusNotifier(this.queue),
      alerts: new LoggingAlertSink(this.logger),
      agent: async (request) => {
        this.agentCalls.push(request);
        return succeeded(request, this.clock.now());
      },
      clock: this.clock,
      random: seededRandom(1),
      logger: this.logger,
      instanceName: "test-worker",
      ...(this.options.durableClient === null
        ? {}
        : { durableClient: () => this.options.durableClient?.(this.runtime) ?? this.runtime }),
      ...(this.options.telemetry ? { telemetry: this.options.telemetry } : {}),
    };
    this.app = createAzureApp(services);
    this.registry = await captureRegistrations(() => registerFunctions(this.app));
    this.runtime = LocalDurableRuntime.open({
      db: this.db,
      clock: this.clock,
      registry: this.registry,
      logger: this.logger,
    });
  }

  fn(name: string): CapturedFunction {
    const fn = this.registry.get(name);
    if (!fn) throw new Error(`${name} is not registered`);
    return fn;
  }

  /** Calls a captured function as the host calls it: trigger input plus an invocation context. */
  invoke(
    name: string,
    input: unknown,
    triggerMetadata: Record<string, unknown> = {},
    invocation: { readonly traceContext?: { readonly traceParent?: string } } = {},
  ): Promise<unknown> {
    const context = {
      invocationId: "inv-1",
      functionName: name,
      triggerMetadata,
      extraInputs: new Map(),
      ...invocation,
    };
    return Promise.resolve(this.fn(name).handler(input, context));
  }

  async close(): Promise<void> {
    await this.runtime.close();
    this.db.close();
  }
}

export function succeeded(request: AgentRequest, now: Date): AgentResponse {
  const { schemaVersion, requestId, orderId, attempt, step, operation, instanceId } = request;
  return {
    ...{ schemaVersion, requestId, orderId, attempt, step, operation, instanceId },
    outcome: "succeeded",
    reference: `ref-${step}`,
    fault: null,
    callsMade: 1,
    completedAt: now.toISOString(),
  };
}
