import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Ledger, type LedgerEvent } from "../../src/local/partner/ledger.js";
import { snapshotTables } from "../support/database-snapshot.js";
import {
  DURABLE_FIXTURE_ORDERS,
  DURABLE_FIXTURE_PARTNER,
  type DurableFixture,
  durableFixturePath,
  FIXTURE_AGENT_MODES,
  fixtureEnv,
} from "../support/durable-fixtures.js";
import { openScenario, orderMessage, post, settle } from "./pipeline-harness.js";

/**
 * Records the fixtures the version tests replay: a real run of the workflow's first version, stopped
 * as a crash would stop it, with orders mid-step, compensating, waiting for recovery and finished.
 * Run only on purpose (`CAPTURE_WORKFLOW_FIXTURES=1 npx vitest run test/pipeline/workflow-fixture-capture.test.ts`),
 * by the build whose histories the fixtures must hold.
 */
describe.skipIf(!process.env.CAPTURE_WORKFLOW_FIXTURES)("capture of workflow version 1's histories", () => {
  it.each(FIXTURE_AGENT_MODES)(
    "records a run in the Agent's %s form",
    async (agentMode) => {
      const partnerEvents: LedgerEvent[] = [];
      const ledger = new Ledger({ append: (event) => partnerEvents.push(event), clear: () => {} });
      const s = await openScenario(fixtureEnv(agentMode, "1"), { ledger, ...DURABLE_FIXTURE_PARTNER });
      try {
        const wanted = (states: readonly string[]) =>
          ["Processed", "Processing", "Compensating"].every((state) => states.includes(state));
        let states: string[] = [];
        for (let elapsed = 0; elapsed < 10 * 60_000; elapsed += 250) {
          // Orders arrive one every 2 seconds, so they are at different points when the run stops.
          const arriving = DURABLE_FIXTURE_ORDERS[elapsed / 2_000];
          if (arriving) await post(s, orderMessage(arriving));
          await settle(s);
          const records = await Promise.all(DURABLE_FIXTURE_ORDERS.map((id) => s.pipeline.states.get(id)));
          states = records.map((record) => record?.processState ?? "none");
          const allArrived = elapsed >= DURABLE_FIXTURE_ORDERS.length * 2_000;
          const midStep = records.some((r) => r?.steps.some((step) => step.status === "Running"));
          if (allArrived && midStep && wanted(states)) break;
          await s.clock.advance(250);
        }
        expect(states, `states at ${s.clock.now().toISOString()}`).toSatisfy(wanted);
        // Taken synchronously: nothing commits between the tables and the partner's books.
        const fixture: DurableFixture = {
          capturedAt: s.clock.now().toISOString(),
          agentMode,
          states: Object.fromEntries(DURABLE_FIXTURE_ORDERS.map((id, i) => [id, states[i] ?? "none"])),
          tables: snapshotTables(s.db),
          partnerEvents: [...partnerEvents],
        };
        writeFileSync(durableFixturePath(agentMode), `${JSON.stringify(fixture, null, 1)}\n`);
      } finally {
        await s.close();
      }
    },
    300_000,
  );
});
