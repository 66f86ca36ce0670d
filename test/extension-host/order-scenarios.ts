import { newKeyRingText } from "../../laptop/embedded/key-file.js";
import { SqliteLease } from "../../laptop/sqlite/sqlite-lease.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { SqliteOrdersRepository } from "../../laptop/sqlite/sqlite-orders-repository.js";
import { SqliteScanJournal } from "../../laptop/sqlite/sqlite-scan-journal.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { type BindingData, invocationContextFor } from "../../laptop/worker/invocation-context.js";
import type { FunctionRegistry } from "../../laptop/worker/registration-capture.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { LoggingAlertSink } from "../../src/adapters/logging/logging-alert-sink.js";
import { QueueStatusNotifier } from "../../src/adapters/messaging/queue-status-notifier.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { loadAzureSettings } from "../../src/config/azure-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import { QUEUE_NAMES } from "../../src/config/names.js";
import type { AgentRequest, AgentResponse } from "../../src/domain/agent-messages.js";
import { seededRandom } from "../../src/domain/backoff.js";
import { TERMINAL_STATES } from "../../src/domain/state-record.js";
import { registerFunctions } from "../../src/functions/app.js";
import { createAzureApp } from "../../src/functions/azure-app.js";
import { FUNCTION_NAMES } from "../../src/functions/function-names.js";
import { orderMessage } from "../pipeline/pipeline-harness.js";
import { SAMPLE } from "../support/azure-app-under-test.js";

/** How the scripted partner answers one call of the Agent: by the step, the operation, and how many came before. */
type Answer = "ok" | "transient" | "permanent" | { readonly lateMs: number };

export interface OrderScenario {
  readonly name: string;
  readonly orderId: string;
  /** The answer to a call; `n` counts the calls for the same step and operation, from 1. */
  readonly partner: (step: string, operation: string, n: number) => Answer;
  /** The record's state the order must end in. */
  readonly finalState: string;
  /** Each attempt's outcome (its orchestration's output), in order. */
  readonly outcomes: readonly string[];
}

/**
 * Each attempt's step deadline, in real time: the Agent that answers late answers after it. Long enough
 * for the extension on a loaded machine (an activity and its reply cross two queues of the backend).
 */
const STEP_TIMEOUT_MS = 8_000;
const LATE_MS = STEP_TIMEOUT_MS + 2_000;

export const ORDER_SCENARIOS: readonly OrderScenario[] = [
  {
    name: "order: every step succeeds",
    orderId: "ord-ok",
    partner: () => "ok",
    finalState: "Processed",
    outcomes: ["processed"],
  },
  {
    name: "order: a step fails transiently, then succeeds in the next attempt",
    orderId: "ord-transient",
    partner: (step, _, n) => (step === "chargePayment" && n === 1 ? "transient" : "ok"),
    finalState: "Processed",
    outcomes: ["gaveUp", "processed"],
  },
  {
    name: "order: a step fails permanently, the earlier steps undone newest first",
    orderId: "ord-permanent",
    partner: (step) => (step === "arrangeShipment" ? "permanent" : "ok"),
    finalState: "Compensated",
    outcomes: ["compensated"],
  },
  {
    name: "order: the Agent does not answer in time, the timer wins, the next attempt succeeds",
    orderId: "ord-late",
    partner: (step, _, n) => (step === "reserveInventory" && n === 1 ? { lateMs: LATE_MS } : "ok"),
    finalState: "Processed",
    outcomes: ["timedOut", "processed"],
  },
  {
    name: "order: a step left in doubt twice, resolved by sending it again, then undone",
    orderId: "ord-doubt",
    partner: (step, operation, n) =>
      step === "chargePayment" && operation === "do" && n <= 2 ? { lateMs: LATE_MS } : "ok",
    finalState: "Compensated",
    outcomes: ["timedOut", "timedOut", "compensated"],
  },
];

/**
 * The app's registrations (src/functions) on SQLite stores of their own and the system clock, with a
 * scripted Agent in place of the partner: one such app per engine, so their records stay apart.
 */
export class OrderApp {
  readonly logger = new MemoryLogger("warn");
  readonly calls: string[] = [];
  private readonly db = openDatabase(":memory:");
  private readonly clock = new SystemClock();
  readonly states = new SqliteStateStore(this.db);
  private readonly queues = new Map<string, SqliteMessageQueue>();
  readonly app = createAzureApp({
    settings: loadAzureSettings({
      ...SAMPLE.Values,
      [DATA_PROTECTION_KEYS_SETTING]: newKeyRingText(new Date()),
      STEP_TIMEOUT_MS: String(STEP_TIMEOUT_MS),
      ATTEMPT_TIMEOUT_MS: String(STEP_TIMEOUT_MS * 6),
      RECOVERY_BACKOFF_BASE_MS: "100",
      RECOVERY_BACKOFF_CAP_MS: "200",
      MAX_RECOVERIES: "1",
      ON_RECOVERIES_EXHAUSTED: "compensate",
    }),
    states: this.states,
    stateReadModel: this.states,
    orders: new SqliteOrdersRepository(this.db, this.clock),
    lease: new SqliteLease(this.db, this.clock, "supervisor"),
    scanJournal: new SqliteScanJournal(this.db),
    queue: (name) => this.queue(name),
    notifier: new QueueStatusNotifier((name) => this.queue(name)),
    alerts: new LoggingAlertSink(this.logger),
    agent: (request) => this.answer(request),
    clock: this.clock,
    random: seededRandom(1),
    logger: this.logger,
    instanceName: "differential",
  });

  registerFunctions(): void {
    registerFunctions(this.app);
  }

  close(): void {
    this.db.close();
  }

  private queue(name: string): SqliteMessageQueue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new SqliteMessageQueue(this.db, this.clock, name);
      this.queues.set(name, queue);
    }
    return queue;
  }

  private async answer(request: AgentRequest): Promise<AgentResponse> {
    const scenario = ORDER_SCENARIOS.find((s) => s.orderId === request.orderId);
    const key = `${request.step} ${request.operation}`;
    const n =
      this.calls.filter((call) => call.startsWith(`${request.orderId} `) && call.endsWith(key)).length + 1;
    this.calls.push(`${request.orderId} attempt ${request.attempt}: ${key}`);
    const answer = scenario?.partner(request.step, request.operation, n) ?? "ok";
    if (typeof answer === "object") await new Promise((resolve) => setTimeout(resolve, answer.lateMs));
    return reply(request, answer === "transient" || answer === "permanent" ? answer : null);
  }
}

function reply(request: AgentRequest, fault: "transient" | "permanent" | null): AgentResponse {
  const { schemaVersion, requestId, orderId, attempt, step, operation, instanceId } = request;
  return {
    ...{ schemaVersion, requestId, orderId, attempt, step, operation, instanceId },
    outcome: fault ? "failed" : "succeeded",
    reference: fault ? null : `ref-${step}`,
    fault: fault ? { kind: fault, code: `Scripted${fault}`, message: `the partner said ${fault}` } : null,
    callsMade: 1,
    completedAt: new Date().toISOString(),
  };
}

/** What one engine made of one order: the record's end, the Agent's calls, and each attempt's instance. */
export interface OrderResult {
  readonly state: string | undefined;
  readonly calls: readonly string[];
  readonly attempts: readonly { status: string; output: unknown; history: readonly string[] }[];
}

/** What the test needs of an engine: the durable client's binding data, and an instance's status and history. */
export interface OrderEngine {
  readonly clientData: unknown;
  status(instanceId: string): Promise<{ runtimeStatus: string; output: unknown }>;
  history(instanceId: string): Promise<string[]>;
}

/**
 * Submits every scenario's order through the app's Service Bus function, and plays the timers (the
 * starter and the Supervisor, each half a second) until every record is final and its last attempt's
 * orchestration has ended; then reads what each attempt's instance recorded.
 */
export async function runOrderScenarios(
  app: OrderApp,
  registry: FunctionRegistry,
  engine: OrderEngine,
  timeoutMs: number,
): Promise<Record<string, OrderResult>> {
  const bindingData: BindingData = (binding) =>
    binding.type === "durableClient" ? engine.clientData : undefined;
  const invoke = async (name: string, input: unknown, triggerMetadata: Record<string, unknown> = {}) => {
    const fn = registry.get(name);
    if (!fn) throw new Error(`${name} is not registered`);
    await fn.handler(input, invocationContextFor(fn, { bindingData, logger: app.logger, triggerMetadata }));
  };
  for (const scenario of ORDER_SCENARIOS) {
    const message = orderMessage(scenario.orderId, { replyTo: QUEUE_NAMES.orderStatus });
    await invoke(FUNCTION_NAMES.submitOrder, message, { messageId: `m-${scenario.orderId}` });
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !(await allSettled(app, engine))) {
    await invoke(FUNCTION_NAMES.starter, {});
    await invoke(FUNCTION_NAMES.supervisor, {});
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const results: Record<string, OrderResult> = {};
  for (const scenario of ORDER_SCENARIOS) results[scenario.name] = await resultOf(app, engine, scenario);
  return results;
}

async function allSettled(app: OrderApp, engine: OrderEngine): Promise<boolean> {
  for (const { orderId } of ORDER_SCENARIOS) {
    const record = await app.states.get(orderId);
    if (!record || !TERMINAL_STATES.includes(record.processState)) return false;
    const last = await engine.status(`${orderId}:${record.attempt}`);
    if (!["Completed", "Failed", "Terminated"].includes(last.runtimeStatus)) return false;
  }
  return true;
}

async function resultOf(app: OrderApp, engine: OrderEngine, scenario: OrderScenario): Promise<OrderResult> {
  const record = await app.states.get(scenario.orderId);
  const attempts: OrderResult["attempts"][number][] = [];
  for (let attempt = 1; attempt <= (record?.attempt ?? 0); attempt++) {
    const instanceId = `${scenario.orderId}:${attempt}`;
    const status = await engine.status(instanceId);
    attempts.push({
      status: status.runtimeStatus,
      // How late a timer fired is real time on both: whether it is there is what compares.
      output: JSON.parse(
        JSON.stringify(status.output ?? null).replace(/"lateByMs":\d+/, '"lateByMs":"<ms>"'),
      ),
      history: await engine.history(instanceId),
    });
  }
  return {
    state: record?.processState,
    calls: app.calls.filter((call) => call.startsWith(`${scenario.orderId} `)),
    attempts,
  };
}
