import { writeFileSync } from "node:fs";
import { describe, it } from "vitest";
import {
  DURABLE_FIXTURE_ORDERS,
  durableFixturePath,
  FIXTURE_AGENT_MODES,
  fixtureEnv,
} from "../support/durable-fixtures.js";
import { openRecordingScenario, runToMixedStates, snapshotOf } from "./upgrade-harness.js";

/**
 * Records the fixtures the version tests replay: a real run of the workflow's first version, stopped
 * as a crash would stop it, with orders mid-step, compensating, failed and finished. Run only on
 * purpose (`CAPTURE_WORKFLOW_FIXTURES=1 npx vitest run test/pipeline/workflow-fixture-capture.test.ts`,
 * then `npx biome format --write test/fixtures`). The fixtures in the repository were recorded by the
 * build that had only version 1: re-recording them with a later build would no longer test that.
 */
describe.skipIf(!process.env.CAPTURE_WORKFLOW_FIXTURES)("capture of workflow version 1's histories", () => {
  it.each(FIXTURE_AGENT_MODES)(
    "records a run in the Agent's %s form",
    async (agentMode) => {
      const recording = await openRecordingScenario(fixtureEnv(agentMode, "1"));
      try {
        const states = await runToMixedStates(recording.scenario, DURABLE_FIXTURE_ORDERS);
        const fixture = snapshotOf(recording, agentMode, states);
        writeFileSync(durableFixturePath(agentMode), `${JSON.stringify(fixture, null, 1)}\n`);
      } finally {
        await recording.scenario.close();
      }
    },
    300_000,
  );
});
