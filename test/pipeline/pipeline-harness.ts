import { setTimeout as realDelay } from "node:timers/promises";
import { afterEach } from "vitest";
import { LocalPipeline } from "../../laptop/embedded/pipeline.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import type { PartnerFaults } from "../../partner/faults.js";
import type { Ledger } from "../../partner/ledger.js";
import { type PartnerService, startPartnerService } from "../../partner/partner-service.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { loadPipelineSettings, type PipelineSettings } from "../../src/config/settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { OrderMessage } from "../../src/domain/order.js";
import { isTerminal, type StoredStateRecord } from "../../src/domain/state-record.js";
import type { DurableClient } from "../../src/ports/durable-client.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";

export const START = "2026-05-01T09:00:00.000Z";

/** Settings for scenarios: short deadlines and backoffs so the story fits in a few virtual minutes. */
export const SCENARIO_ENV: Record<string, string> = {
  ATTEMPT_TIMEOUT_MS: "60000",
  STEP_TIMEOUT_MS: "10000",
  AGENT_CALLS_PER_STEP: "3",
  MAX_RECOVERIES: "3",
  RECOVERY_BACKOFF_BASE_MS: "1000",
  RECOVERY_BACKOFF_CAP_MS: "5000",
  EXTENDED_BACKOFF_AFTER: "2",
  EXTENDED_BACKOFF_MS: "30000",
  AGENT_BACKOFF_BASE_MS: "100",
  AGENT_BACKOFF_CAP_MS: "1000",
  PARTNER_CALL_TIMEOUT_MS: "3000",
  // Scenarios move virtual time in jumps, which would look like a host that was down: only the tests of
  // host downtime (host-downtime.test.ts) judge late timers, with the shipped threshold.
  LATE_TIMER_MS: "3600000",
};

export interface ScenarioOptions {
  /** Start consumers and timers at once (default true). */
  readonly start?: boolean;
  readonly supervisorIntervalMs?: number;
  readonly duplicateReplies?: number;
  readonly wrapDurableClient?: (runtime: DurableClient) => DurableClient;
  /** The partner may reject undo operations for good (see PartnerServiceOptions). */
  readonly undoRefusals?: boolean;
  /** Where the pipeline's spans and metrics go (default: the global no-ops). */
  readonly telemetry?: Telemetry;
  /** The embedded database to run on, for example one restored from a snapshot (default: a new one in memory). */
  readonly db?: EmbeddedDatabase;
  /** The partner's books (default: new and empty). */
  readonly ledger?: Ledger;
  readonly partnerFaults?: Partial<PartnerFaults>;
  readonly partnerSeed?: number;
  /** The virtual clock's start (default START). */
  readonly startAt?: string;
}

export interface Scenario {
  readonly pipeline: LocalPipeline;
  readonly partner: PartnerService;
  readonly clock: VirtualClock;
  readonly logger: MemoryLogger;
  readonly db: EmbeddedDatabase;
  readonly settings: PipelineSettings;
  close(): Promise<void>;
}

export async function openScenario(
  env: Record<string, string> = {},
  options: ScenarioOptions = {},
): Promise<Scenario> {
  const clock = new VirtualClock(options.startAt ?? START);
  const logger = new MemoryLogger();
  const db = options.db ?? openDatabase(":memory:");
  const settings = loadPipelineSettings({ ...SCENARIO_ENV, ...env });
  const partner = await startPartnerService({
    clock,
    logger: logger.child({ component: "partner" }),
    slowMs: 60_000,
    undoRefusals: options.undoRefusals ?? false,
    ...(options.ledger ? { ledger: options.ledger } : {}),
    ...(options.partnerFaults ? { faults: options.partnerFaults } : {}),
    ...(options.partnerSeed !== undefined ? { seed: options.partnerSeed } : {}),
  });
  const pipeline = await LocalPipeline.open({
    db,
    clock,
    random: seededRandom(1),
    logger,
    settings,
    partnerUrl: partner.url,
    starterIntervalMs: 1_000,
    supervisorIntervalMs: options.supervisorIntervalMs ?? 5_000,
    ...(options.duplicateReplies !== undefined ? { duplicateReplies: options.duplicateReplies } : {}),
    ...(options.wrapDurableClient ? { wrapDurableClient: options.wrapDurableClient } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
  if (options.start !== false) pipeline.start();
  return {
    pipeline,
    partner,
    clock,
    logger,
    db,
    settings,
    close: async () => {
      // The partner first: closing it ends any call still waiting on a slow answer.
      await partner.close();
      await pipeline.stop();
      db.close();
    },
  };
}

/**
 * For a test file: a function that opens a scenario, each closed after the test that opened it.
 */
export function scenarioPerTest(): (
  env?: Record<string, string>,
  options?: ScenarioOptions,
) => Promise<Scenario> {
  let current: Scenario | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return async (env = {}, options = {}) => {
    current = await openScenario(env, options);
    return current;
  };
}

export function orderMessage(orderId: string, overrides: Partial<OrderMessage> = {}): OrderMessage {
  return {
    schemaVersion: 1,
    orderId,
    customerId: "cust-1",
    currency: "EUR",
    items: [{ sku: "SKU-1", quantity: 2, unitPriceMinor: 1_299 }],
    replyTo: "status-test",
    ...overrides,
  };
}

export async function post(scenario: Scenario, message: unknown): Promise<void> {
  await scenario.pipeline.post(message as JsonValue);
}

/**
 * Lets the pipeline work, then moves virtual time in steps until `done` holds. Partner calls are real
 * HTTP on loopback, so each step also gives real I/O a moment; no step sleeps on the virtual clock.
 */
export async function runUntil(
  scenario: Scenario,
  done: () => Promise<boolean> | boolean,
  options: { stepMs?: number; maxMs?: number } = {},
): Promise<void> {
  const stepMs = options.stepMs ?? 500;
  const maxMs = options.maxMs ?? 10 * 60_000;
  for (let elapsed = 0; elapsed <= maxMs; elapsed += stepMs) {
    await settle(scenario);
    if (await done()) return;
    await scenario.clock.advance(stepMs);
  }
  throw new Error(`condition not reached within ${maxMs} ms of virtual time`);
}

/** Waits until the pipeline is idle, or briefly when it is waiting on virtual time or on a slow partner. */
export async function settle(scenario: Scenario): Promise<void> {
  await Promise.race([scenario.pipeline.idle(), realDelay(200)]);
  await realDelay(5);
}

export async function recordOf(scenario: Scenario, orderId: string): Promise<StoredStateRecord> {
  const record = await scenario.pipeline.states.get(orderId);
  if (!record) throw new Error(`no state record for ${orderId}`);
  return record;
}

export function terminal(scenario: Scenario, ...orderIds: string[]): () => Promise<boolean> {
  return async () => {
    for (const id of orderIds) {
      const record = await scenario.pipeline.states.get(id);
      if (!record || !isTerminal(record.processState)) return false;
    }
    return true;
  };
}
