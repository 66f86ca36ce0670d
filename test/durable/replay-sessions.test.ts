import { afterEach, describe, expect, it, vi } from "vitest";
import type { HistoryEvent } from "../../laptop/durable/history.js";
import { ReplaySession } from "../../laptop/durable/replay-session.js";
import { TEST_ORCHESTRATIONS as T } from "../support/durable-test-app.js";
import { type Harness, openHarness, temporaryDatabasePath } from "./runtime-harness.js";

const opened: Harness[] = [];
afterEach(async () => {
  for (const h of opened.splice(0)) {
    await h.runtime.close();
    h.db.close();
  }
  vi.restoreAllMocks();
});

async function open(options: Parameters<typeof openHarness>[0]): Promise<Harness> {
  const harness = await openHarness(options);
  opened.push(harness);
  return harness;
}

/** What a history says, without the times nothing depends on (the clock is virtual and equal anyway). */
function shape(events: readonly HistoryEvent[]): unknown[] {
  return events.map(({ Timestamp: _at, ...rest }) => rest);
}

/** Drives each test-app story the same way; returns every instance's history and status. */
async function play(replaySessions: boolean) {
  const h = await open({ replaySessions });
  const { runtime, clock } = h;
  await runtime.startNew(T.sequence, { instanceId: "seq", input: 3 });
  await runtime.startNew(T.race, { instanceId: "race-reply", input: { step: "a", timeoutMs: 60_000 } });
  await runtime.startNew(T.race, { instanceId: "race-timer", input: { step: "b", timeoutMs: 1_000 } });
  await runtime.startNew(T.catcher, { instanceId: "catcher" });
  await runtime.startNew(T.fanOut, { instanceId: "fan", input: 4 });
  await runtime.startNew(T.lateWaiter, { instanceId: "late" });
  await runtime.raiseEvent("late", "early", { n: 1 });
  await runtime.idle();
  await runtime.raiseEvent("race-reply", "reply-a", { ok: true });
  await clock.advance(1_000);
  await runtime.idle();
  const ids = ["seq", "race-reply", "race-timer", "catcher", "fan", "late"];
  const result: Record<string, unknown> = {};
  for (const id of ids) {
    result[id] = { status: await runtime.getStatus(id), history: shape(runtime.historyOf(id)) };
  }
  return result;
}

describe("replay sessions", () => {
  it("record exactly the histories and outcomes that full replays record, resuming instead of replaying", async () => {
    const resume = vi.spyOn(ReplaySession.prototype, "resume");
    const full = await play(false);
    expect(resume).not.toHaveBeenCalled();
    const withSessions = await play(true);
    expect(resume.mock.results.filter((r) => r.value !== undefined).length).toBeGreaterThan(5);
    expect(withSessions).toEqual(full);
  });

  it("lose nothing when the runtime stops mid-run: the next one replays in full from the store", async () => {
    const { path, remove } = temporaryDatabasePath();
    try {
      const first = await open({ path, replaySessions: true });
      await first.runtime.startNew(T.race, { instanceId: "r", input: { step: "c", timeoutMs: 60_000 } });
      await first.runtime.idle();
      await first.runtime.close();
      const second = await open({ path, replaySessions: true, clock: first.clock });
      await second.runtime.raiseEvent("r", "reply-c", { ok: 1 });
      const status = await second.runtime.waitForCompletion("r");
      expect(status.output).toEqual({ outcome: "reply", value: { ok: 1 } });
    } finally {
      remove();
    }
  });

  it("still catch a non-deterministic orchestrator at its next full replay", async () => {
    const { path, remove } = temporaryDatabasePath();
    try {
      const first = await open({ path, replaySessions: true });
      await first.runtime.startNew(T.clockReader, { instanceId: "clock" });
      await first.runtime.idle();
      await first.runtime.close();
      const second = await open({ path, replaySessions: true, clock: first.clock });
      await second.clock.advance(1);
      await second.runtime.raiseEvent("clock", "continue");
      const status = await second.runtime.waitForCompletion("clock");
      expect(status.runtimeStatus).toBe("Failed");
      expect(status.failure).toMatch(/^non-deterministic orchestration/);
    } finally {
      remove();
    }
  });
});
