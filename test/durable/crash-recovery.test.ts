import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { DurableStore } from "../../laptop/durable/durable-store.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { TEST_ORCHESTRATIONS as T } from "../support/durable-test-app.js";
import { type Harness, openHarness, START, temporaryDatabasePath } from "./runtime-harness.js";

const never = new Promise<void>(() => undefined);

/**
 * A runtime is "dropped" by walking away from it: no close, no halt. Its blocked activity never
 * finishes and its virtual clock never moves again, so, like a killed process, it writes nothing more.
 */
async function withFile(test: (path: string) => Promise<Harness[]>): Promise<void> {
  const { path, remove } = temporaryDatabasePath();
  const opened: Harness[] = [];
  try {
    opened.push(...(await test(path)));
  } finally {
    for (const h of opened) h.db.close();
    remove();
  }
}

describe("crash recovery", () => {
  it("runs an activity again after the runtime died while it ran, and completes", async () => {
    await withFile(async (path) => {
      const first = await openHarness({ path, deps: { calls: [], gate: never } });
      await first.runtime.startNew(T.blockingSequence, { instanceId: "crash-activity", input: 5 });
      await vi.waitFor(() => expect(first.deps.calls).toEqual(["blockingDouble(5)"]));

      const second = await openHarness({ path, clock: new VirtualClock(first.clock.now()) });
      const status = await second.runtime.waitForCompletion("crash-activity");
      expect(status).toMatchObject({ runtimeStatus: "Completed", output: 20 });
      expect(second.deps.calls).toEqual(["blockingDouble(5)", "double(10)"]);
      await second.runtime.close();
      return [first, second];
    });
  });

  it("runs an activity again when the runtime died after it finished but before an episode recorded its result", async () => {
    await withFile(async (path) => {
      const first = await openHarness({ path, deps: { calls: [] } });
      // Every episode after the first fails to commit, as if the process died at that moment: the
      // result of the first activity never reaches a history.
      const original = DurableStore.prototype.commitEpisodes;
      let episodes = 0;
      const commit = vi.spyOn(DurableStore.prototype, "commitEpisodes").mockImplementation(function (
        this: DurableStore,
        commits,
      ) {
        episodes++;
        if (episodes > 1) throw new Error("the process died here");
        return original.call(this, commits);
      });
      try {
        await first.runtime.startNew(T.sequence, { instanceId: "lost-result", input: 1 });
        await vi.waitFor(() => expect(episodes).toBeGreaterThan(1));
        first.runtime.halt();
      } finally {
        commit.mockRestore();
      }
      expect(first.deps.calls).toEqual(["double(1)"]);

      const second = await openHarness({ path, clock: new VirtualClock(first.clock.now()) });
      const status = await second.runtime.waitForCompletion("lost-result");
      expect(status).toMatchObject({ runtimeStatus: "Completed", output: 32 });
      // The activity whose result was lost ran again; every other one ran once.
      expect(second.deps.calls).toEqual(["double(1)", "double(2)", "double(4)", "double(8)", "double(16)"]);
      await second.runtime.close();
      return [first, second];
    });
  });

  it("re-arms a timer after the runtime died while it waited, firing at the original deadline", async () => {
    await withFile(async (path) => {
      const first = await openHarness({ path });
      await first.runtime.startNew(T.race, {
        instanceId: "crash-timer",
        input: { step: "ship", timeoutMs: 300_000 },
      });
      await first.runtime.idle();
      await first.clock.advance(100_000);
      await first.runtime.idle();

      const clock = new VirtualClock(first.clock.now());
      const second = await openHarness({ path, clock });
      await second.runtime.idle();
      await clock.advance(199_999);
      await second.runtime.idle();
      expect((await second.runtime.getStatus("crash-timer"))?.runtimeStatus).toBe("Running");
      await clock.advance(1);
      const status = await second.runtime.waitForCompletion("crash-timer");
      expect(status.output).toEqual({ outcome: "timeout", at: "2026-03-01T10:05:00.000Z" });
      expect(second.deps.calls).toEqual([]); // "send" ran once, before the crash
      await second.runtime.close();
      return [first, second];
    });
  });

  it("delivers a reply raised after a restart to the instance that waited before it", async () => {
    await withFile(async (path) => {
      const first = await openHarness({ path });
      await first.runtime.startNew(T.race, {
        instanceId: "crash-reply",
        input: { step: "pay", timeoutMs: 300_000 },
      });
      await first.runtime.idle();

      const second = await openHarness({ path, clock: new VirtualClock(first.clock.now()) });
      await second.runtime.raiseEvent("crash-reply", "reply-pay", { paid: true });
      const status = await second.runtime.waitForCompletion("crash-reply");
      expect(status.output).toEqual({ outcome: "reply", value: { paid: true } });
      await second.runtime.close();
      return [first, second];
    });
  });

  it("finishes an instance whose process was killed (SIGKILL) in the middle of an activity", async () => {
    await withFile(async (path) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", join(import.meta.dirname, "crash-child.ts"), path, "killed-1"],
        {
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += String(chunk);
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk) => {
          if (String(chunk).includes("activity-started")) resolve();
        });
        child.on("exit", (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
      });
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGKILL");
      expect(await exited).toBeNull();

      const recovered = await openHarness({ path, clock: new VirtualClock(START) });
      const status = await recovered.runtime.waitForCompletion("killed-1");
      expect(status).toMatchObject({ runtimeStatus: "Completed", output: 84 });
      expect(recovered.deps.calls).toEqual(["blockingDouble(21)", "double(42)"]);
      await recovered.runtime.close();
      return [recovered];
    });
  }, 30_000);
});

describe("concurrency", () => {
  it("runs activities of many instances at once, never more than the limit", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const h = await openHarness({ deps: { calls: [], gate }, maxConcurrentActivities: 3 });
    try {
      for (let i = 0; i < 8; i++)
        await h.runtime.startNew(T.blockingSequence, { instanceId: `conc-${i}`, input: i });
      await vi.waitFor(() => expect(h.deps.calls).toHaveLength(3));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(h.deps.calls).toHaveLength(3);
      release();
      const outputs = await Promise.all(
        Array.from({ length: 8 }, (_, i) => h.runtime.waitForCompletion(`conc-${i}`).then((s) => s.output)),
      );
      expect(outputs).toEqual(Array.from({ length: 8 }, (_, i) => i * 4));
      expect(h.deps.calls.filter((c) => c.startsWith("blockingDouble"))).toHaveLength(8);
    } finally {
      await h.runtime.close();
      h.db.close();
    }
  });
});
