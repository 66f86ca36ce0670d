import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";

describe("VirtualClock", () => {
  it("moves only when advanced", async () => {
    const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
    expect(clock.now().toISOString()).toBe("2026-01-01T00:00:00.000Z");
    await clock.advance(90_000);
    expect(clock.now().toISOString()).toBe("2026-01-01T00:01:30.000Z");
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
  });

  it("wakes sleepers in deadline order, each seeing its own deadline as now", async () => {
    const clock = new VirtualClock();
    const woke: string[] = [];
    const start = clock.now().getTime();
    const sleeper = (name: string, ms: number) =>
      clock.sleep(ms).then(() => woke.push(`${name}@${clock.now().getTime() - start}`));
    const all = Promise.all([sleeper("c", 300), sleeper("a", 100), sleeper("b", 200), sleeper("a2", 100)]);
    await clock.advance(150);
    expect(woke).toEqual(["a@100", "a2@100"]);
    expect(clock.pendingSleeps).toBe(2);
    await clock.advance(1_000);
    await all;
    expect(woke).toEqual(["a@100", "a2@100", "b@200", "c@300"]);
    expect(clock.now().getTime() - start).toBe(1_150);
  });

  it("lets a woken sleeper sleep again within the same advance", async () => {
    const clock = new VirtualClock();
    let ticks = 0;
    const loop = (async () => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(10);
        ticks++;
      }
    })();
    await clock.advance(50);
    await loop;
    expect(ticks).toBe(5);
  });

  it("resolves a zero sleep at once", async () => {
    const clock = new VirtualClock();
    await clock.sleep(0);
    expect(clock.pendingSleeps).toBe(0);
  });
});

describe("aborting a sleep", () => {
  it("rejects with the signal's reason and forgets the sleeper", async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    controller.abort(new Error("shutting down"));
    await expect(sleeping).rejects.toThrow("shutting down");
    expect(clock.pendingSleeps).toBe(0);
    await expect(clock.sleep(1, controller.signal)).rejects.toThrow("shutting down");
  });
});

describe("sleeping with one signal many times", () => {
  it("leaves no abort listener behind once a sleep has woken", async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    }) as typeof remove;
    for (let i = 0; i < 20; i++) {
      const sleeping = clock.sleep(10, controller.signal);
      await clock.advance(10);
      await sleeping;
    }
    expect(listeners).toBe(0);
  });
});
