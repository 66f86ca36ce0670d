import { afterEach, describe, expect, it } from "vitest";
import { checkInvariants } from "../../laptop/simulation/oracles/invariants.js";
import { isTerminal, type StateRecord } from "../../src/domain/state-record.js";
import { LATEST_WORKFLOW_VERSION, workflowOf } from "../../src/domain/workflow.js";
import {
  DURABLE_FIXTURE_ORDERS,
  type DurableFixture,
  FIXTURE_AGENT_MODES,
  fixtureEnv,
  type RecordedVersion,
  readDurableFixture,
} from "../support/durable-fixtures.js";
import { orderMessage, post, runUntil, type Scenario, terminal } from "./pipeline-harness.js";
import {
  openRecordingScenario,
  type PartnerSetup,
  restoreScenario,
  runToMixedStates,
  snapshotOf,
} from "./upgrade-harness.js";

/**
 * The live run's partner: refusals and transient faults, undos included, but no slow replies, which
 * wait out real HTTP timeouts and would make the run minutes long.
 */
const LIVE_PARTNER: PartnerSetup = {
  partnerFaults: { transient: 0.45, permanent: 0.15 },
  partnerSeed: 5,
  undoRefusals: true,
};

const NEW_ORDERS = ["ord-v2-1", "ord-v2-2", "ord-v2-3", "ord-v2-4", "ord-v2-5", "ord-v2-6"];

let open: Scenario | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/**
 * The deployment that makes the newest version the default: a new process on what the old one left, with the
 * default WORKFLOW_VERSION, taking new orders while the old ones finish.
 */
async function deployNewest(fixture: DurableFixture, partner?: PartnerSetup): Promise<Scenario> {
  open = await restoreScenario(fixture, { AGENT_MODE: fixture.agentMode }, partner);
  for (const id of NEW_ORDERS) await post(open, orderMessage(id));
  return open;
}

async function recordsOf(s: Scenario, ids: readonly string[]): Promise<Map<string, StateRecord>> {
  const records = new Map<string, StateRecord>();
  for (const id of ids) {
    const record = await s.pipeline.states.get(id);
    if (record) records.set(id, record);
  }
  return records;
}

/** Every order ended as its own version says, and the partner saw each effect once. */
async function expectEachOrderOnItsVersion(
  s: Scenario,
  fixture: DurableFixture,
  fixtureVersion: RecordedVersion = 1,
): Promise<void> {
  const ids = [...Object.keys(fixture.states), ...NEW_ORDERS];
  await runUntil(s, terminal(s, ...ids), { maxMs: 30 * 60_000 });
  const records = await recordsOf(s, ids);
  const ledger = s.partner.ledger();
  for (const [id, record] of records) {
    const version = NEW_ORDERS.includes(id) ? LATEST_WORKFLOW_VERSION : fixtureVersion;
    expect(record.workflowVersion, id).toBe(version);
    expect(record.steps.map((step) => step.name)).toEqual(workflowOf(version).steps);
    expect(isTerminal(record.processState), `${id} ${record.processState}`).toBe(true);
    const effects = ledger.effectsByOrder[id] ?? [];
    if (record.processState === "Processed") {
      expect(effects.map((e) => e.operation).sort(), id).toEqual([...workflowOf(version).steps].sort());
    }
    if (record.processState === "Compensated")
      expect(
        effects.every((e) => e.undone),
        id,
      ).toBe(true);
  }
  // The step version 2 added ran for no order of version 1.
  const notified = new Set(
    ledger.effectLog.filter((e) => e.operation === "notifyCustomer").map((e) => e.orderId),
  );
  if (fixtureVersion === 1) expect([...notified].every((id) => NEW_ORDERS.includes(id))).toBe(true);
  expect(notified.size).toBeGreaterThan(0);
  const report = checkInvariants({
    submitted: ids,
    records,
    deadLettered: new Map(),
    writes: [],
    ledger,
    maxRecoveries: s.settings.recovery.maxRecoveries,
    onExhausted: s.settings.recovery.onExhausted,
  });
  expect(report.violations).toEqual([]);
  // No history recorded by version 1 failed to replay on the build that has both versions.
  const failed = s.db.prepare("SELECT instance_id, failure FROM df_instances WHERE status = 'Failed'").all();
  expect(failed).toEqual([]);
}

describe("a deployment that makes the newest workflow version the default under orders of version 1", () => {
  it.each(FIXTURE_AGENT_MODES)(
    "finishes the orders of histories recorded by the build that had only version 1 under version 1 (Agent as %s)",
    async (agentMode) => {
      const fixture = readDurableFixture(agentMode);
      // The recording holds what the test is about: orders mid-step, compensating, and finished.
      expect(Object.values(fixture.states)).toEqual(
        expect.arrayContaining(["Processing", "Compensating", "Processed"]),
      );
      const s = await deployNewest(fixture);
      await expectEachOrderOnItsVersion(s, fixture);
    },
    120_000,
  );

  const LATER_RECORDINGS = ([2, 3] as const).flatMap((version) =>
    FIXTURE_AGENT_MODES.map((agentMode) => ({ version, next: version + 1, agentMode })),
  );
  it.each(LATER_RECORDINGS)(
    "finishes the orders of histories recorded by the build before version $next under version $version (Agent as $agentMode)",
    async ({ version, agentMode }) => {
      const fixture = readDurableFixture(agentMode, version);
      expect(Object.values(fixture.states)).toEqual(
        expect.arrayContaining(["Processing", "Compensating", "Processed"]),
      );
      const s = await deployNewest(fixture);
      await expectEachOrderOnItsVersion(s, fixture, version);
    },
    120_000,
  );

  it.each(FIXTURE_AGENT_MODES)(
    "stops a version-1 run as a crash would, restarts with the newest version as default, and every order ends on its own version (Agent as %s)",
    async (agentMode) => {
      const recording = await openRecordingScenario(fixtureEnv(agentMode, "1"), LIVE_PARTNER);
      // The recording's order ids: their keys meet the same partner faults, so the run reaches the same mix.
      const ids = DURABLE_FIXTURE_ORDERS;
      let fixture: DurableFixture;
      try {
        const states = await runToMixedStates(recording.scenario, ids);
        fixture = snapshotOf(recording, agentMode, states);
      } finally {
        await recording.scenario.close();
      }
      const s = await deployNewest(fixture, LIVE_PARTNER);
      await expectEachOrderOnItsVersion(s, fixture);
    },
    120_000,
  );
});
