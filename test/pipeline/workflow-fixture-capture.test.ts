import { writeFileSync } from "node:fs";
import { describe, it } from "vitest";
import {
  DURABLE_FIXTURE_ORDERS,
  durableFixturePath,
  FIXTURE_AGENT_MODES,
  fixtureEnv,
  type RecordedVersion,
} from "../support/durable-fixtures.js";
import { openRecordingScenario, runToMixedStates, snapshotOf } from "./upgrade-harness.js";

/** The version to record: `CAPTURE_WORKFLOW_FIXTURES` names it (1 if it is set to anything else). */
const captured: RecordedVersion = (() => {
  const named = Number(process.env.CAPTURE_WORKFLOW_FIXTURES);
  return named === 2 || named === 3 ? named : 1;
})();

/**
 * Records the fixtures the version tests replay: a real run of one workflow version, stopped as a
 * crash would stop it, with orders mid-step, compensating, failed and finished. Run only on purpose
 * (`CAPTURE_WORKFLOW_FIXTURES=<version> npx vitest run test/pipeline/workflow-fixture-capture.test.ts`,
 * then `npx biome format --write test/fixtures`), with the last build before the next version: the
 * fixtures in the repository were each recorded so (version 1's by the build that had only version 1),
 * and re-recording them with a later build would no longer test that.
 */
describe.skipIf(!process.env.CAPTURE_WORKFLOW_FIXTURES)(
  `capture of workflow version ${captured}'s histories`,
  () => {
    it.each(FIXTURE_AGENT_MODES)(
      "records a run in the Agent's %s form",
      async (agentMode) => {
        const recording = await openRecordingScenario(fixtureEnv(agentMode, String(captured)));
        try {
          const states = await runToMixedStates(recording.scenario, DURABLE_FIXTURE_ORDERS);
          const fixture = snapshotOf(recording, agentMode, states);
          writeFileSync(durableFixturePath(agentMode, captured), `${JSON.stringify(fixture, null, 1)}\n`);
        } finally {
          await recording.scenario.close();
        }
      },
      300_000,
    );
  },
);
