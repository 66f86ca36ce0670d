import { afterEach, describe, expect, it } from "vitest";
import { Ledger, type LedgerEvent } from "../../partner/ledger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { restoreTables } from "../support/database-snapshot.js";
import {
  openScenario,
  orderMessage,
  post,
  recordOf,
  runUntil,
  type Scenario,
  type ScenarioOptions,
  terminal,
} from "./pipeline-harness.js";
import { type RecordingScenario, snapshotOf } from "./upgrade-harness.js";

const MAX_RECOVERIES = 3;
const CRASHES = MAX_RECOVERIES + 2;
/** Longer than ATTEMPT_TIMEOUT_MS (60 s in scenarios): every attempt's deadline passes while the host is down. */
const DOWN_MS = 2 * 60_000;
/** Every partner answer hangs, so each crash catches a step with its Agent's call under way. */
const HANGING_PARTNER: ScenarioOptions = { partnerFaults: { slow: 1 } };

let open: Scenario | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function recording(env: Record<string, string>, options: ScenarioOptions): Promise<RecordingScenario> {
  const partnerEvents: LedgerEvent[] = [];
  const ledger = new Ledger({ append: (event) => partnerEvents.push(event), clear: () => {} });
  open = await openScenario(env, { ledger, ...options });
  return { scenario: open, partnerEvents };
}

/**
 * The host dies now (what it committed is what a new process finds) and comes back `DOWN_MS` later on
 * the same database and partner books.
 */
async function crashAndRestart(
  before: RecordingScenario,
  env: Record<string, string>,
  options: ScenarioOptions,
): Promise<RecordingScenario> {
  const fixture = snapshotOf(before, env.AGENT_MODE === "queue" ? "queue" : "activity", {});
  // What the old process does from here no longer counts: time runs on for it until it has let go.
  let closed = false;
  const closing = before.scenario.close().then(() => {
    closed = true;
  });
  while (!closed) {
    await before.scenario.clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await closing;
  open = undefined;
  const partnerEvents = [...fixture.partnerEvents];
  const ledger = Ledger.replay(fixture.partnerEvents, {
    append: (e) => partnerEvents.push(e),
    clear: () => {},
  });
  const db = openDatabase(":memory:");
  restoreTables(db, fixture.tables);
  open = await openScenario(env, {
    db,
    ledger,
    startAt: addMilliseconds(fixture.capturedAt, DOWN_MS),
    ...options,
  });
  return { scenario: open, partnerEvents };
}

async function runUntilStepRunning(s: Scenario, orderId: string, attemptAbove: number): Promise<number> {
  let attempt = 0;
  await runUntil(s, async () => {
    const record = await recordOf(s, orderId);
    attempt = record.attempt;
    return attempt > attemptAbove && record.steps.some((step) => step.status === "Running");
  });
  return attempt;
}

describe("a host's downtime is not the order's fault", () => {
  it.each(["activity", "queue"])(
    `%s Agents: an order whose host dies mid-step ${CRASHES} times (MAX_RECOVERIES ${MAX_RECOVERIES}) is processed with no failure counted`,
    {
      timeout: 120_000,
    },
    async (agentMode) => {
      const env = { MAX_RECOVERIES: String(MAX_RECOVERIES), AGENT_MODE: agentMode, LATE_TIMER_MS: "15000" };
      let run = await recording(env, HANGING_PARTNER);
      await post(run.scenario, orderMessage("ord-down"));
      let attempt = 0;
      for (let crash = 1; crash <= CRASHES; crash++) {
        attempt = await runUntilStepRunning(run.scenario, "ord-down", attempt);
        run = await crashAndRestart(run, env, HANGING_PARTNER);
      }
      // Back for good, with a partner that answers.
      run = await crashAndRestart(run, env, {});
      const s = run.scenario;
      await runUntil(s, terminal(s, "ord-down"));
      const record = await recordOf(s, "ord-down");
      expect(record).toMatchObject({ processState: "Processed", failureCount: 0 });
      expect(record.hostInterruptions).toBeGreaterThanOrEqual(CRASHES);
      expect(record.attempt).toBeGreaterThan(CRASHES);
      // In doubt after each crash, repeated with the same keys: each effect applied once.
      const ledger = s.partner.ledger();
      expect(ledger.duplicateEffects).toBe(0);
      expect(ledger.effectsByOrder["ord-down"]?.filter((e) => !e.undone)).toHaveLength(4);
      const spared = s.logger.lines.filter((l) => l.event === "supervisor.recovered" && l.charged === false);
      expect(spared.length).toBeGreaterThan(0);
    },
  );
});
