import { Ledger, type LedgerEvent } from "../../partner/ledger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { restoreTables, snapshotTables } from "../support/database-snapshot.js";
import { DURABLE_FIXTURE_PARTNER, type DurableFixture } from "../support/durable-fixtures.js";
import {
  openScenario,
  orderMessage,
  post,
  type Scenario,
  type ScenarioOptions,
  settle,
} from "./pipeline-harness.js";

/** The partner's faults: what decides which orders are where when a run stops. */
export type PartnerSetup = Pick<ScenarioOptions, "partnerFaults" | "partnerSeed" | "undoRefusals">;

/** A scenario whose partner journals its books, so a snapshot can take them with the database. */
export interface RecordingScenario {
  readonly scenario: Scenario;
  readonly partnerEvents: readonly LedgerEvent[];
}

export async function openRecordingScenario(
  env: Record<string, string>,
  partner: PartnerSetup = DURABLE_FIXTURE_PARTNER,
): Promise<RecordingScenario> {
  const partnerEvents: LedgerEvent[] = [];
  const ledger = new Ledger({ append: (event) => partnerEvents.push(event), clear: () => {} });
  const scenario = await openScenario(env, { ledger, ...partner });
  return { scenario, partnerEvents };
}

const MIXED: readonly string[] = ["Processed", "Processing", "Compensating"];

/**
 * Posts `orderIds` one every 2 seconds of virtual time and runs until they have all arrived and some
 * are finished, some mid-step and some compensating; answers each order's state at that moment.
 */
export async function runToMixedStates(
  s: Scenario,
  orderIds: readonly string[],
): Promise<Record<string, string>> {
  let states: string[] = [];
  for (let elapsed = 0; elapsed < 10 * 60_000; elapsed += 250) {
    const arriving = orderIds[elapsed / 2_000];
    if (arriving) await post(s, orderMessage(arriving));
    await settle(s);
    const records = await Promise.all(orderIds.map((id) => s.pipeline.states.get(id)));
    states = records.map((record) => record?.processState ?? "none");
    const allArrived = elapsed >= orderIds.length * 2_000;
    const midStep = records.some((r) => r?.steps.some((step) => step.status === "Running"));
    if (allArrived && midStep && MIXED.every((state) => states.includes(state))) {
      return Object.fromEntries(orderIds.map((id, i) => [id, states[i] ?? "none"]));
    }
    await s.clock.advance(250);
  }
  throw new Error(`no moment with orders ${MIXED.join(", ")} at once; last seen: ${states.join(", ")}`);
}

/** What a process that died now would leave: the committed tables and the partner's books, taken at once. */
export function snapshotOf(
  recording: RecordingScenario,
  agentMode: "activity" | "queue",
  states: Readonly<Record<string, string>>,
): DurableFixture {
  const { scenario } = recording;
  return {
    capturedAt: scenario.clock.now().toISOString(),
    agentMode,
    states,
    tables: snapshotTables(scenario.db),
    partnerEvents: [...recording.partnerEvents],
  };
}

/** A new process on what `fixture` left: its database, the partner's books, its clock where it stopped. */
export async function restoreScenario(
  fixture: DurableFixture,
  env: Record<string, string>,
  partner: PartnerSetup = DURABLE_FIXTURE_PARTNER,
): Promise<Scenario> {
  const db = openDatabase(":memory:");
  restoreTables(db, fixture.tables);
  return openScenario(env, {
    db,
    ledger: Ledger.replay(fixture.partnerEvents),
    startAt: fixture.capturedAt,
    ...partner,
  });
}
