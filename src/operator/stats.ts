import type { BreakerView } from "../domain/breaker-view.js";
import type { RecordedScan } from "../domain/recorded-scan.js";
import { isTerminal, PROCESS_STATES, RETIRED_STATES, TERMINAL_STATES } from "../domain/state-record.js";
import { addMilliseconds, type IsoInstant, millisecondsBetween, toInstant } from "../domain/time.js";
import { WORKFLOW_VERSIONS } from "../domain/workflow.js";
import type { Clock } from "../ports/clock.js";
import {
  MAX_DELIVERY_COUNT_EXCEEDED,
  type QueueReceiver,
  type ReceivedMessage,
} from "../ports/message-queue.js";
import type { ScanJournal } from "../ports/scan-journal.js";
import type { StateReadModel } from "../ports/state-read-model.js";
import { reusedReading } from "./reused-reading.js";

/** How many minutes the throughput covers, one count per minute. */
export const THROUGHPUT_WINDOW_MINUTES = 5;
/** How many clock minutes the finished orders per state cover: the last is the current one, partial. */
export const FINISHED_HOUR_MINUTES = 60;
/** Messages counted per queue at most: a count that reaches it is reported as capped. */
export const MESSAGE_COUNT_CAP = 1_000;
/** How long a reading of the queues, or of the throughput, is reused before it is taken again. */
export const STATS_REUSE_MS = 5_000;
/** Messages per peek: one round trip each to the broker. */
const PEEK_BATCH = 250;
const MINUTE_MS = 60_000;

/**
 * The `Pending` record that has waited longest since it was accepted or last made progress (a step
 * completed, or an operator started it again), and for how long now: its deferrals, recoveries and
 * claims given back do not make it younger.
 */
export interface OldestPending {
  readonly orderId: string;
  readonly since: IsoInstant;
  readonly ageMs: number;
}

/** A count of messages, and whether it reached the cap (then there may be more). */
export interface CappedCount {
  readonly count: number;
  readonly capped: boolean;
}

export interface MessageCounts {
  /** When the queues were peeked (a reading is reused for STATS_REUSE_MS). */
  readonly countedAt: IsoInstant;
  /** The cap on each queue's count. */
  readonly countedUpTo: number;
  /** Messages the broker gave up on, per queue: delivered too often (or, in Service Bus, expired). */
  readonly deadLettered: Readonly<Record<string, CappedCount>>;
  /** Messages a handler refused, with its reason: invalid or conflicting orders, malformed Agent messages. */
  readonly parked: CappedCount;
}

export interface Throughput {
  readonly windowMinutes: number;
  /** The end of the last window: the time of the reading. */
  readonly until: IsoInstant;
  /** Orders finished in each 60-second window up to `until`, oldest first; the last ends at `until`, included. */
  readonly finishedPerMinute: readonly number[];
  /** The last window's count per second, to two decimals. */
  readonly perSecondLastMinute: number;
}

/** Orders finished per clock minute over the last hour, per terminal state: the dashboard's chart. */
export interface FinishedLastHour {
  /** The start of the first minute, a clock minute (UTC); each minute after it is one count. */
  readonly from: IsoInstant;
  /** The time of the reading: the last minute, the current one, runs up to it, included. */
  readonly until: IsoInstant;
  /**
   * Per terminal state, the records now in it whose last change falls in each minute, oldest first
   * (FINISHED_HOUR_MINUTES counts): counted by last change, as `Throughput` is.
   */
  readonly byState: Readonly<Record<string, readonly number[]>>;
}

/** Orders of one workflow version that may still run its code. */
export interface WorkflowVersionUse {
  /** `Pending`, `Processing` or `Compensating`: they will run again without anyone's help. */
  readonly inFlight: number;
  /** `Error` or `CompensationFailed`: an operator may resubmit or compensate them, under this version. */
  readonly awaitingOperator: number;
}

export interface WorkflowVersions {
  /** The version new orders are pinned to (the WORKFLOW_VERSION setting). */
  readonly default: number;
  /**
   * Every version this build runs, and any other the store holds, by version: a version other than
   * the default with nothing in flight and nothing awaiting an operator can leave the next deployment.
   */
  readonly byVersion: Readonly<Record<string, WorkflowVersionUse>>;
}

/** Not terminal: the order's code still runs. */
const IN_FLIGHT_STATES = PROCESS_STATES.filter((state) => !isTerminal(state));
/** Terminal but not retired: an operator may resubmit or compensate it, under its own version. */
const AWAITING_OPERATOR_STATES = TERMINAL_STATES.filter((state) => !RETIRED_STATES.includes(state));

/** The figures of `GET /api/stats` beyond the counts per state, each read on demand. */
export interface StatsReadings {
  workflowVersions(): Promise<WorkflowVersions>;
  oldestPending(): Promise<OldestPending | null>;
  messages(): Promise<MessageCounts>;
  lastScan(): Promise<RecordedScan | null>;
  throughput(): Promise<Throughput>;
  finishedLastHour(): Promise<FinishedLastHour>;
  /** Each partner operation's circuit breaker; absent on a host without breakers. */
  readonly breakers?: () => Promise<readonly BreakerView[]>;
}

/** Where a host's statistics come from. */
export interface StatsSources {
  readonly clock: Clock;
  readonly states: Pick<
    StateReadModel,
    "oldestPending" | "countFinishedBetween" | "countFinishedPerMinute" | "countByWorkflowVersion"
  >;
  /** The WORKFLOW_VERSION setting. */
  readonly defaultWorkflowVersion: number;
  readonly journal: ScanJournal;
  /** The dead-letter sub-queue of each queue the host consumes, by the queue's name. */
  readonly deadLetterQueues: Readonly<Record<string, QueueReceiver>>;
  /**
   * The queue refused messages are moved to (the Functions host's invalid-messages queue), or null where
   * a handler dead-letters them itself with its reason (the embedded host): they are then told apart
   * from the broker's by that reason.
   */
  readonly parkedQueue: QueueReceiver | null;
  /**
   * The partner operations' circuit breakers as their store has them now, one per partner operation
   * (`SharedBreaker.views` given every operation's name), read at each request: a breaker changes within
   * seconds. Absent: the host has no breakers, and `GET /api/stats` has no `breakers` field.
   */
  readonly breakers?: () => Promise<readonly BreakerView[]>;
}

/** The statistics readings over a host's sources; the queues and the throughput are reused for a few seconds. */
export function createStatsReadings(sources: StatsSources): StatsReadings {
  const { clock } = sources;
  return {
    oldestPending: async () => {
      const oldest = await sources.states.oldestPending();
      if (!oldest) return null;
      const ageMs = Math.max(0, millisecondsBetween(oldest.progressAt, toInstant(clock.now())));
      return { orderId: oldest.orderId, since: oldest.progressAt, ageMs };
    },
    workflowVersions: () => readWorkflowVersions(sources),
    messages: reusedReading(clock, STATS_REUSE_MS, () => countMessages(sources)),
    lastScan: () => sources.journal.last(),
    throughput: reusedReading(clock, STATS_REUSE_MS, () => readThroughput(sources)),
    finishedLastHour: reusedReading(clock, STATS_REUSE_MS, () => readFinishedLastHour(sources)),
    ...(sources.breakers ? { breakers: sources.breakers } : {}),
  };
}

async function readWorkflowVersions(sources: StatsSources): Promise<WorkflowVersions> {
  const counts = await sources.states.countByWorkflowVersion([
    ...IN_FLIGHT_STATES,
    ...AWAITING_OPERATOR_STATES,
  ]);
  const byVersion: Record<string, { inFlight: number; awaitingOperator: number }> = {};
  const use = (version: number) => {
    byVersion[version] ??= { inFlight: 0, awaitingOperator: 0 };
    return byVersion[version];
  };
  for (const version of WORKFLOW_VERSIONS) use(version);
  for (const { workflowVersion, processState, count } of counts) {
    const entry = use(workflowVersion);
    if (IN_FLIGHT_STATES.includes(processState)) entry.inFlight += count;
    else entry.awaitingOperator += count;
  }
  return { default: sources.defaultWorkflowVersion, byVersion };
}

/**
 * Windows (from, to], so that an order finished at the very instant of the reading counts: instants have
 * millisecond precision, so that is the store's [from + 1 ms, to + 1 ms).
 */
async function readThroughput({ clock, states }: StatsSources): Promise<Throughput> {
  const until = toInstant(clock.now());
  const starts = Array.from({ length: THROUGHPUT_WINDOW_MINUTES }, (_, i) =>
    addMilliseconds(until, 1 - (THROUGHPUT_WINDOW_MINUTES - i) * MINUTE_MS),
  );
  const finishedPerMinute = await Promise.all(
    starts.map((from) => states.countFinishedBetween(from, addMilliseconds(from, MINUTE_MS))),
  );
  const last = finishedPerMinute[finishedPerMinute.length - 1] ?? 0;
  return {
    windowMinutes: THROUGHPUT_WINDOW_MINUTES,
    until,
    finishedPerMinute,
    perSecondLastMinute: Math.round((last / 60) * 100) / 100,
  };
}

/** One grouped read of the hour: the store counts per minute and state, placed here in the hour's minutes. */
async function readFinishedLastHour({ clock, states }: StatsSources): Promise<FinishedLastHour> {
  const until = toInstant(clock.now());
  const now = Date.parse(until);
  const from = toInstant(new Date(now - (now % MINUTE_MS) - (FINISHED_HOUR_MINUTES - 1) * MINUTE_MS));
  const byState = Object.fromEntries(
    TERMINAL_STATES.map((state) => [state, new Array<number>(FINISHED_HOUR_MINUTES).fill(0)]),
  );
  // Up to `until` included, as the throughput's last window.
  for (const { minute, processState, count } of await states.countFinishedPerMinute(
    from,
    addMilliseconds(until, 1),
  )) {
    const index = (Date.parse(`${minute}:00.000Z`) - Date.parse(from)) / MINUTE_MS;
    const counts = byState[processState];
    if (counts && index >= 0 && index < FINISHED_HOUR_MINUTES) counts[index] = count;
  }
  return { from, until, byState };
}

async function countMessages(sources: StatsSources): Promise<MessageCounts> {
  const countedAt = toInstant(sources.clock.now());
  const queues = Object.entries(sources.deadLetterQueues);
  const peeked = await Promise.all(queues.map(([, receiver]) => peekUpTo(receiver, MESSAGE_COUNT_CAP)));
  const parkedQueue = sources.parkedQueue;
  // Where handlers dead-letter refused messages themselves, only the broker's own reason is a dead letter.
  const byBroker = (messages: readonly ReceivedMessage[]) =>
    parkedQueue ? messages : messages.filter((m) => m.deadLetterReason === MAX_DELIVERY_COUNT_EXCEEDED);
  const deadLettered = Object.fromEntries(
    queues.map(([name], i) => {
      const messages = peeked[i] ?? [];
      return [name, capped(byBroker(messages).length, messages.length)];
    }),
  );
  const parked = parkedQueue
    ? cappedOf(await peekUpTo(parkedQueue, MESSAGE_COUNT_CAP))
    : capped(
        peeked.reduce((sum, messages) => sum + messages.length - byBroker(messages).length, 0),
        Math.max(0, ...peeked.map((messages) => messages.length)),
      );
  return { countedAt, countedUpTo: MESSAGE_COUNT_CAP, deadLettered, parked };
}

/** `count`, capped when the peek it came from (of `peekedCount` messages) reached the cap. */
function capped(count: number, peekedCount: number): CappedCount {
  return { count, capped: peekedCount >= MESSAGE_COUNT_CAP };
}

function cappedOf(messages: readonly ReceivedMessage[]): CappedCount {
  return capped(messages.length, messages.length);
}

/** Up to `cap` messages of the queue, oldest first, peeked in batches without locking any. */
async function peekUpTo(receiver: QueueReceiver, cap: number): Promise<ReceivedMessage[]> {
  const messages: ReceivedMessage[] = [];
  let from = 0;
  while (messages.length < cap) {
    const batch = await receiver.peek(Math.min(PEEK_BATCH, cap - messages.length), from);
    const last = batch[batch.length - 1];
    if (!last) break;
    messages.push(...batch);
    from = last.sequenceNumber + 1;
  }
  return messages;
}
