import { setMaxListeners } from "node:events";
import { AesGcmFieldCipher } from "../../src/adapters/crypto/aes-gcm-field-cipher.js";
import { LoggingAlertSink } from "../../src/adapters/logging/logging-alert-sink.js";
import { QueueStatusNotifier } from "../../src/adapters/messaging/queue-status-notifier.js";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { createAgentWorkerHandler, replyMessageId } from "../../src/agents/agent-worker.js";
import { createPartnerAgent } from "../../src/agents/partner-agent.js";
import { createPartnerBreaker } from "../../src/breaker/partner-breaker.js";
import type { SharedBreaker } from "../../src/breaker/shared-breaker.js";
import { QUEUE_NAMES } from "../../src/config/names.js";
import { agentAmplification, type PipelineSettings } from "../../src/config/settings.js";
import type { AgentRequest, AgentResponse } from "../../src/domain/agent-messages.js";
import type { RandomSource } from "../../src/domain/backoff.js";
import { seededRandom } from "../../src/domain/backoff.js";
import { OPERATIONS_BY_STEP } from "../../src/domain/partner-operations.js";
import { replyEventName } from "../../src/domain/workflow.js";
import { registerOrderProcessing } from "../../src/functions/register-order-processing.js";
import { createOperatorCommands, type OperatorCommands } from "../../src/operator/operator-commands.js";
import type { OrdersApiBackend } from "../../src/operator/orders-api.js";
import { createStatsReadings } from "../../src/operator/stats.js";
import { createOrderActivities } from "../../src/orchestrators/order-activities.js";
import type { Clock } from "../../src/ports/clock.js";
import type { DurableClient } from "../../src/ports/durable-client.js";
import type { KeyRing } from "../../src/ports/field-cipher.js";
import type { Logger } from "../../src/ports/logger.js";
import type { MessageHandler } from "../../src/ports/message-handler.js";
import type { JsonValue, SendResult } from "../../src/ports/message-queue.js";
import type { RetentionStore } from "../../src/ports/retention-store.js";
import type { StateReadModel } from "../../src/ports/state-read-model.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { createAgentReplyHandler } from "../../src/scheduler/agent-reply.js";
import { orderQueueMessage } from "../../src/scheduler/order-message-id.js";
import { createStarter, createStarterRuns, type StarterReport } from "../../src/scheduler/starter.js";
import { createSubmissionHandler, type SubmissionDeps } from "../../src/scheduler/submission.js";
import { ProtectedStateStore } from "../../src/state/protected-state-store.js";
import { createRetentionPurge, type PurgeReport } from "../../src/supervisor/retention.js";
import { journaledScan } from "../../src/supervisor/scan-journal.js";
import { createSupervisor, type ScanReport } from "../../src/supervisor/supervisor.js";
import { observeOrderStates, registerBreakerGauge } from "../../src/telemetry/instruments.js";
import { countingRefusals } from "../../src/telemetry/refusals.js";
import { globalTelemetry, type Telemetry } from "../../src/telemetry/telemetry.js";
import { LocalDurableRuntime } from "../durable/local-durable-runtime.js";
import { SqliteBreakerStore } from "../sqlite/sqlite-breaker-store.js";
import { SqliteLease } from "../sqlite/sqlite-lease.js";
import { SqliteMessageQueue } from "../sqlite/sqlite-message-queue.js";
import { SqliteOrdersRepository } from "../sqlite/sqlite-orders-repository.js";
import { SqliteScanJournal } from "../sqlite/sqlite-scan-journal.js";
import { SqliteStateStore } from "../sqlite/sqlite-state-store.js";
import { captureRegistrations } from "../worker/registration-capture.js";
import { QueueConsumer } from "./queue-consumer.js";

/** The queues the pipeline's handlers read, each with its dead-letter queue. */
const CONSUMED_QUEUES = [QUEUE_NAMES.orders, QUEUE_NAMES.agentRequests, QUEUE_NAMES.agentResponses];

export interface PipelineOptions {
  readonly db: EmbeddedDatabase;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly logger: Logger;
  readonly settings: PipelineSettings;
  readonly partnerUrl: string;
  readonly starterIntervalMs: number;
  readonly supervisorIntervalMs: number;
  /** How often expired records and their histories are purged (default hourly). */
  readonly retentionIntervalMs?: number;
  /** Distinguishes Supervisors that share one database (leader election between them). */
  readonly supervisorHolder?: string;
  readonly maxConcurrentActivities?: number;
  /** Fault injection: the share of Agent replies delivered twice (a duplicating transport). */
  readonly duplicateReplies?: number;
  /** Fault injection: wraps the durable client the starter and the reply handler use (an outage). */
  readonly wrapDurableClient?: (runtime: DurableClient) => DurableClient;
  /** Where spans and metrics go: an SDK's (OTLP, or a test's in-memory exporter), or the global no-ops. */
  readonly telemetry?: Telemetry;
  /** Keep orchestrations in memory between episodes (default true; see replay-session.ts). */
  readonly replaySessions?: boolean;
  /**
   * Seals the fields classified personal or payment in the state store (ProtectedStateStore). The
   * hosts always give one; without it, as in most tests, those fields are stored in clear.
   */
  readonly keyRing?: KeyRing;
}

/**
 * The embedded host's composition root: every store on one SQLite database, the handlers wired to
 * them, the order orchestration registered through `df.app` and run by the local durable runtime,
 * queue consumers in place of Service Bus triggers and timers in place of timer triggers. It decides
 * nothing about an order: the handlers do.
 */
export class LocalPipeline {
  /** The state store the handlers use: the SQLite one, behind field protection when a key ring is given. */
  readonly states: StateStore & StateReadModel & RetentionStore;
  /** The SQLite store itself, as its rows are: for checks that read every record. */
  readonly storedStates: SqliteStateStore;
  readonly orders: SqliteOrdersRepository;
  readonly alerts: LoggingAlertSink;
  readonly ordersQueue: SqliteMessageQueue;
  readonly runtime: LocalDurableRuntime;
  /** The durable client the handlers are given: the runtime, unless a test wraps it. */
  readonly durable: DurableClient;
  readonly runStarter: () => Promise<StarterReport>;
  readonly runSupervisor: () => Promise<ScanReport>;
  /** Deletes the records retention has expired, with their orchestration histories. */
  readonly runRetention: () => Promise<PurgeReport>;
  /** The operator's commands on parked orders (resubmit, compensate). */
  readonly operator: OperatorCommands;
  /** Where the pipeline's spans and metrics go. */
  readonly telemetry: Telemetry;
  /** The partner operations' circuit breakers, shared by every Agent of the host. */
  readonly breaker: SharedBreaker;
  private readonly queueNamed: (name: string) => SqliteMessageQueue;
  private readonly agent: (request: AgentRequest) => Promise<AgentResponse>;
  private readonly consumers: QueueConsumer[] = [];
  private readonly stopping = new AbortController();
  private started = false;
  private readonly starterRuns: ReturnType<typeof createStarterRuns>;

  private constructor(
    private readonly options: PipelineOptions,
    runtime: LocalDurableRuntime,
    parts: {
      states: StateStore & StateReadModel & RetentionStore;
      storedStates: SqliteStateStore;
      orders: SqliteOrdersRepository;
      alerts: LoggingAlertSink;
      runSupervisor: () => Promise<ScanReport>;
      queueNamed: (name: string) => SqliteMessageQueue;
      agent: (request: AgentRequest) => Promise<AgentResponse>;
      breaker: SharedBreaker;
    },
  ) {
    setMaxListeners(0, this.stopping.signal);
    this.queueNamed = parts.queueNamed;
    this.agent = parts.agent;
    this.runtime = runtime;
    this.durable = options.wrapDurableClient?.(runtime) ?? runtime;
    this.states = parts.states;
    this.storedStates = parts.storedStates;
    this.orders = parts.orders;
    this.alerts = parts.alerts;
    this.runSupervisor = parts.runSupervisor;
    this.breaker = parts.breaker;
    // The runtime itself, not a test's wrapper: purging is not part of what an outage test breaks.
    this.runRetention = createRetentionPurge({
      states: this.states,
      durable: runtime,
      clock: options.clock,
      logger: options.logger,
      retentionDays: options.settings.retentionDays,
      batchSize: 100,
      maxBatches: 50,
    });
    this.telemetry = options.telemetry ?? globalTelemetry();
    observeOrderStates(this.telemetry, () => this.states.countByState());
    registerBreakerGauge(this.telemetry, () => this.breaker.knownStatuses());
    this.operator = createOperatorCommands({
      states: this.states,
      clock: options.clock,
      logger: options.logger,
    });
    this.ordersQueue = this.queue(QUEUE_NAMES.orders);
    const starterDeps = {
      states: this.states,
      clock: options.clock,
      logger: options.logger,
      attemptTimeoutMs: options.settings.attemptTimeoutMs,
      stepTimeoutMs: options.settings.stepTimeoutMs,
      maxInFlight: options.settings.maxInFlight,
      pageSize: options.settings.starterPageSize,
      startRetryDelayMs: options.settings.recovery.backoff.baseMs,
      telemetry: this.telemetry,
    };
    const starter = createStarter(starterDeps);
    this.runStarter = () => starter(this.durable);
    this.starterRuns = createStarterRuns(starterDeps, () => this.stopping.signal.aborted);
  }

  static async open(options: PipelineOptions): Promise<LocalPipeline> {
    const { db, clock, logger, settings } = options;
    const telemetry = options.telemetry ?? globalTelemetry();
    const stores = openStores(options);
    const queueNamed = queueRegistry(options);
    let pipeline: LocalPipeline | undefined;
    const opened = () => pipeline;
    const notifier = new QueueStatusNotifier(queueNamed);
    // Every Agent on this host, in either form, shares the breakers kept in the host's database.
    const breaker = createPartnerBreaker({
      store: new SqliteBreakerStore(db),
      clock,
      logger,
      settings: settings.breaker,
      alerts: stores.alerts,
    });
    const partnerAgent = createPartnerAgent({
      partnerUrl: options.partnerUrl,
      clock,
      random: options.random,
      logger,
      backoff: settings.agentBackoff,
      callTimeoutMs: settings.partnerCallTimeoutMs,
      ...(settings.partnerAccessKey !== undefined ? { accessKey: settings.partnerAccessKey } : {}),
      telemetry,
      orders: stores.orders,
      breaker,
    });
    const activities = orderActivities(options, {
      stores,
      notifier,
      queueNamed,
      agent: withDuplicateReplies(partnerAgent, opened),
      telemetry,
      pipeline: opened,
    });
    const registry = await captureRegistrations(() =>
      registerOrderProcessing(activities, () => {
        if (!pipeline) throw new Error("an activity ran before the pipeline was open");
        return pipeline.durable;
      }),
    );
    const runtime = LocalDurableRuntime.open({
      db,
      clock,
      registry,
      logger,
      ...(options.maxConcurrentActivities
        ? { maxConcurrentActivities: options.maxConcurrentActivities }
        : {}),
      // The embedded host keeps orchestrations between episodes; tests of orchestrations replay in full.
      replaySessions: options.replaySessions ?? true,
    });
    // The Supervisor asks the runtime about an expired attempt's orchestration: whether its host was down.
    const runSupervisor = supervisorRuns(options, { stores, notifier, telemetry, durable: runtime });
    pipeline = new LocalPipeline(options, runtime, {
      ...stores,
      runSupervisor,
      queueNamed,
      agent: partnerAgent,
      breaker,
    });
    return pipeline;
  }

  private readonly duplicateRandom = seededRandom(0x5eed);

  /** Decides, from its own seeded sequence, whether this reply is delivered twice. */
  duplicated(): boolean {
    const rate = this.options.duplicateReplies ?? 0;
    return rate > 0 && this.duplicateRandom() < rate;
  }

  /** Wakes the consumer of a queue after a send, as Service Bus delivers without waiting for a poll. */
  nudge(queueName: string): void {
    for (const consumer of this.consumers) if (consumer.queueName === queueName) consumer.nudge();
  }

  /** The named queue on this database (status queues are created on first use). */
  queue(name: string): SqliteMessageQueue {
    return this.queueNamed(name);
  }

  /** Posts an order message to the orders queue, as an application posts to Service Bus. */
  async post(body: JsonValue, traceparent: string | null = null): Promise<SendResult> {
    const result = await this.ordersQueue.send(orderQueueMessage(body, traceparent));
    this.nudge(QUEUE_NAMES.orders);
    return result;
  }

  /** What the orders API (HTTP and dashboard) asks of this pipeline. */
  apiBackend(): OrdersApiBackend {
    return {
      post: (body, traceparent) => this.post(body, traceparent),
      getRecord: (orderId) => this.states.get(orderId),
      listRecords: (query) => this.states.listRecent(query),
      countByState: () => this.states.countByState(),
      countPending: () => this.states.countInState("Pending"),
      operator: this.operator,
      maxInFlight: this.options.settings.maxInFlight,
      maxPending: this.options.settings.maxPending,
      // Handlers here dead-letter what they refuse, with their reason: parked in the dead-letter queues.
      stats: createStatsReadings({
        clock: this.options.clock,
        states: this.states,
        journal: new SqliteScanJournal(this.options.db),
        deadLetterQueues: Object.fromEntries(
          CONSUMED_QUEUES.map((name) => [name, this.queue(name).deadLetterQueue]),
        ),
        parkedQueue: null,
        defaultWorkflowVersion: this.options.settings.workflowVersion,
        breakers: () => this.breaker.views(OPERATIONS_BY_STEP),
      }),
    };
  }

  /** What the orders queue's submission handler needs from this pipeline's stores and settings. */
  submissionDeps(): SubmissionDeps {
    const { clock, logger, settings } = this.options;
    return {
      orders: this.orders,
      states: this.states,
      notifier: new QueueStatusNotifier((name) => this.queue(name)),
      alerts: this.alerts,
      clock,
      logger,
      retryBudgetPerOrder: settings.retryBudgetPerOrder,
      undoReservePerOrder: settings.undoReservePerOrder,
      workflowVersion: settings.workflowVersion,
    };
  }

  /** Starts the queue consumers and the starter and Supervisor timers. */
  start(): void {
    this.started = true;
    const { logger, settings } = this.options;
    const submission = createSubmissionHandler({
      ...this.submissionDeps(),
      onAccepted: () => void this.nudgeStarter(),
      telemetry: this.telemetry,
    });
    this.consume(this.ordersQueue, submission);
    if (settings.agentMode === "queue") {
      const responses = this.queue(QUEUE_NAMES.agentResponses);
      this.consume(
        this.queue(QUEUE_NAMES.agentRequests),
        createAgentWorkerHandler({
          agent: this.agent,
          logger,
          reply: async (response) => {
            const body = response as unknown as JsonValue;
            await responses.send({
              messageId: replyMessageId(response),
              body,
              correlationId: response.orderId,
            });
            if (this.duplicated()) {
              await responses.send({
                messageId: `${response.requestId}:reply:again`,
                body,
                correlationId: response.orderId,
              });
            }
            this.nudge(QUEUE_NAMES.agentResponses);
          },
        }),
      );
      const replies = createAgentReplyHandler({ logger });
      this.consume(responses, (message) => replies(message, this.durable));
    }
    void this.every(this.options.starterIntervalMs, () => this.nudgeStarter());
    void this.every(this.options.supervisorIntervalMs, () => this.runSupervisor());
    // Its own timer, not the Supervisor's tick: retention is due by the hour, recovery by the second.
    // A minute after start as well, so a host restarted more often than hourly still purges.
    const retentionMs = this.options.retentionIntervalMs ?? 3_600_000;
    void this.every(retentionMs, () => this.runRetention(), Math.min(retentionMs, 60_000));
  }

  private consume(queue: SqliteMessageQueue, handler: MessageHandler): void {
    const { clock, logger } = this.options;
    const counted = countingRefusals(handler, queue.name, this.telemetry);
    const consumer = new QueueConsumer({ queue, handler: counted, clock, logger, name: queue.name });
    this.consumers.push(consumer);
    consumer.start();
  }

  /**
   * Runs the starter now (or once more after the run in progress): never two at once. Resolves when
   * that run ends; never rejects. Before `start()` it runs nothing: a pipeline not started claims no
   * record (an order settled by a caller's own starter does not set this one going).
   */
  nudgeStarter(durable: DurableClient = this.durable): Promise<void> {
    if (!this.started) return Promise.resolve();
    return this.starterRuns.nudge(durable);
  }

  private async every(intervalMs: number, run: () => Promise<unknown>, firstMs = intervalMs): Promise<void> {
    for (let waitMs = firstMs; !this.stopping.signal.aborted; waitMs = intervalMs) {
      try {
        await this.options.clock.sleep(waitMs, this.stopping.signal);
      } catch {
        return;
      }
      try {
        await run();
      } catch (error) {
        this.options.logger.error("timer.error", { error });
      }
    }
  }

  /** Resolves when consumers and the durable runtime have nothing left to do without time passing. */
  async idle(): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await Promise.all(this.consumers.map((c) => c.idle()));
      await this.starterRuns.running;
      await this.runtime.idle();
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.consumers.map((c) => c.stop()));
    await this.starterRuns.running;
    await this.runtime.close();
  }
}

/** The stores on the pipeline's database: the state store behind field protection when a key ring is given. */
function openStores(options: PipelineOptions) {
  const { db, clock, logger } = options;
  const storedStates = new SqliteStateStore(db);
  const states = options.keyRing
    ? new ProtectedStateStore(storedStates, new AesGcmFieldCipher(options.keyRing))
    : storedStates;
  const orders = new SqliteOrdersRepository(db, clock);
  const alerts = new LoggingAlertSink(logger);
  return { states, storedStates, orders, alerts };
}

type PipelineStores = ReturnType<typeof openStores>;

/** The queues on the pipeline's database by name, each made on first use. */
function queueRegistry(options: PipelineOptions): (name: string) => SqliteMessageQueue {
  const { db, clock, settings } = options;
  const queues = new Map<string, SqliteMessageQueue>();
  // The Agent's request queue redelivers at most as often as the retry budget assumes.
  queues.set(
    QUEUE_NAMES.agentRequests,
    new SqliteMessageQueue(db, clock, QUEUE_NAMES.agentRequests, {
      maxDeliveryCount: settings.agentRequestMaxDeliveries,
    }),
  );
  return (name: string) => {
    let queue = queues.get(name);
    if (!queue) {
      queue = new SqliteMessageQueue(db, clock, name);
      queues.set(name, queue);
    }
    return queue;
  };
}

type Agent = (request: AgentRequest) => Promise<AgentResponse>;

/** Fault injection for the activity form: a duplicated answer reaches the instance as a stray event. */
function withDuplicateReplies(agent: Agent, pipeline: () => LocalPipeline | undefined): Agent {
  return async (request) => {
    const response = await agent(request);
    const opened = pipeline();
    if (opened?.duplicated()) {
      await opened.runtime.raiseEvent(
        request.instanceId,
        replyEventName(request.step, request.operation),
        response,
      );
    }
    return response;
  };
}

/** The order activities on the pipeline's stores; `pipeline` is the pipeline once it is open. */
function orderActivities(
  options: PipelineOptions,
  wiring: {
    stores: PipelineStores;
    notifier: QueueStatusNotifier;
    queueNamed: (name: string) => SqliteMessageQueue;
    agent: Agent;
    telemetry: Telemetry;
    pipeline: () => LocalPipeline | undefined;
  },
) {
  const { clock, logger, settings } = options;
  const { stores, queueNamed, pipeline } = wiring;
  return createOrderActivities({
    states: stores.states,
    orders: stores.orders,
    notifier: wiring.notifier,
    alerts: stores.alerts,
    clock,
    logger,
    agent: wiring.agent,
    telemetry: wiring.telemetry,
    // The embedded host does not hold the activity until the starter's run ends: nothing here freezes
    // a process between invocations, and the activity slot is worth more to the next step.
    onOrderSettled: async (durable) => {
      void pipeline()?.nudgeStarter(durable);
    },
    sendAgentRequest: async (request) => {
      await queueNamed(QUEUE_NAMES.agentRequests).send({
        messageId: request.requestId,
        body: request as unknown as JsonValue,
      });
      pipeline()?.nudge(QUEUE_NAMES.agentRequests);
    },
    settings: {
      stepTimeoutMs: settings.stepTimeoutMs,
      agentCallsPerStep: settings.agentCallsPerStep,
      agentAmplification: agentAmplification(settings),
      agentMode: settings.agentMode,
      maxDeferralMs: settings.maxDeferralMs,
    },
  });
}

/** The Supervisor's scan behind the lease on the pipeline's database, each run written to the scan journal. */
function supervisorRuns(
  options: PipelineOptions,
  wiring: {
    stores: PipelineStores;
    notifier: QueueStatusNotifier;
    telemetry: Telemetry;
    durable: DurableClient;
  },
): () => Promise<ScanReport> {
  const { db, clock, logger, settings } = options;
  const holder = options.supervisorHolder ?? "embedded-supervisor";
  const scan = createSupervisor({
    states: wiring.stores.states,
    lease: new SqliteLease(db, clock, "supervisor"),
    alerts: wiring.stores.alerts,
    notifier: wiring.notifier,
    clock,
    random: options.random,
    logger,
    holder,
    policy: settings.recovery,
    pageSize: settings.supervisorPageSize,
    maxPages: settings.supervisorMaxPages,
    leaseMs: settings.supervisorLeaseMs,
    telemetry: wiring.telemetry,
    interruptions: {
      lookup: (instanceId) => wiring.durable.getStatus(instanceId),
      lateTimerMs: settings.lateTimerMs,
      extensionMs: settings.attemptTimeoutMs,
    },
  });
  return journaledScan(scan, { journal: new SqliteScanJournal(db), clock, logger, holder });
}
