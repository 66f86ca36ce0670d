import { describe, expect, it } from "vitest";
import { CoalescedRuns } from "../../src/scheduler/coalesced-runs.js";

describe("CoalescedRuns", () => {
  it("never overlaps runs, and turns any number of triggers during a run into one more run", async () => {
    let active = 0;
    let runs = 0;
    let release: () => void = () => {};
    const runner = new CoalescedRuns(async () => {
      active++;
      runs++;
      expect(active).toBe(1);
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
      active--;
    });
    const first = runner.trigger();
    void runner.trigger();
    void runner.trigger();
    release();
    await first;
    expect(runs).toBe(2);
    expect(runner.running).toBeUndefined();
  });

  it("stops repeating once stopped, and reports a failed run to the triggers waiting on it", async () => {
    let runs = 0;
    let stop = false;
    const runner = new CoalescedRuns(
      async () => {
        runs++;
        stop = true;
      },
      () => stop,
    );
    const pending = runner.trigger();
    void runner.trigger();
    await pending;
    expect(runs).toBe(1);
    const failing = new CoalescedRuns(async () => {
      throw new Error("store down");
    });
    await expect(failing.trigger()).rejects.toThrow("store down");
    expect(failing.running).toBeUndefined();
  });

  it("gives the repeat the argument of the latest trigger", async () => {
    const seen: string[] = [];
    let release: () => void = () => {};
    const runner = new CoalescedRuns<string>(async (client) => {
      seen.push(client);
      if (seen.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = runner.trigger("a");
    void runner.trigger("b");
    void runner.trigger("c");
    release();
    await first;
    expect(seen).toEqual(["a", "c"]);
  });
});
