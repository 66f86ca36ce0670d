import { readFileSync } from "node:fs";
import type { LedgerEvent } from "../../partner/ledger.js";
import type { TableSnapshot } from "./database-snapshot.js";

/** A run of the embedded pipeline stopped as a crash stops it: its database and the partner's books. */
export interface DurableFixture {
  /** The virtual time the run was stopped at: a restored run starts its clock there. */
  readonly capturedAt: string;
  readonly agentMode: "activity" | "queue";
  /** Each order's process state at the stop. */
  readonly states: Readonly<Record<string, string>>;
  readonly tables: TableSnapshot;
  readonly partnerEvents: readonly LedgerEvent[];
}

export const FIXTURE_AGENT_MODES = ["activity", "queue"] as const;

export const DURABLE_FIXTURE_ORDERS = Array.from(
  { length: 16 },
  (_, i) => `ord-v1-${String(i + 1).padStart(2, "0")}`,
);

/** Faults that leave orders in every state at once: slow replies past the step deadline, refusals, errors. */
export const DURABLE_FIXTURE_PARTNER = {
  partnerFaults: { transient: 0.1, permanent: 0.1, slow: 0.2, lostReply: 0.05 },
  partnerSeed: 11,
  undoRefusals: true,
} as const;

export function fixtureEnv(agentMode: "activity" | "queue", workflowVersion: string): Record<string, string> {
  return { AGENT_MODE: agentMode, WORKFLOW_VERSION: workflowVersion };
}

/** The workflow versions whose runs were recorded, each by the last build before the next version. */
export type RecordedVersion = 1 | 2 | 3;

/**
 * A recording of one workflow version's run: version 1's by the build that had only version 1, each later
 * one's by the last build before the version after it (their orders carry the version 1 ids).
 */
export function durableFixturePath(
  agentMode: "activity" | "queue",
  workflowVersion: RecordedVersion = 1,
): string {
  return new URL(`../fixtures/durable-v${workflowVersion}-${agentMode}.json`, import.meta.url).pathname;
}

export function readDurableFixture(
  agentMode: "activity" | "queue",
  workflowVersion: RecordedVersion = 1,
): DurableFixture {
  return JSON.parse(readFileSync(durableFixturePath(agentMode, workflowVersion), "utf8")) as DurableFixture;
}
