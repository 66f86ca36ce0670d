import { describe, expect, it } from "vitest";
import { TimerQueue } from "../../laptop/durable/timer-queue.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";

function queueOn(clock: VirtualClock) {
  const handed: { at: number; items: string[] }[] = [];
  const queue = new TimerQueue<string>(clock, (items) => handed.push({ at: clock.now().getTime(), items }));
  return { queue, handed };
}

describe("TimerQueue", () => {
  it("hands timers over at their due time, earliest first, whatever order they were added in", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { queue, handed } = queueOn(clock);
    queue.add("c", t0 + 300);
    queue.add("a", t0 + 100);
    queue.add("b", t0 + 200);
    await clock.advance(99);
    expect(handed).toEqual([]);
    await clock.advance(1_000);
    expect(handed).toEqual([
      { at: t0 + 100, items: ["a"] },
      { at: t0 + 200, items: ["b"] },
      { at: t0 + 300, items: ["c"] },
    ]);
    expect(queue.size).toBe(0);
  });

  it("hands timers due at the same moment over together, in the order they were added", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { queue, handed } = queueOn(clock);
    for (const name of ["x", "y", "z"]) queue.add(name, t0 + 50);
    await clock.advance(50);
    expect(handed).toEqual([{ at: t0 + 50, items: ["x", "y", "z"] }]);
  });

  it("keeps one sleep on the clock however many timers are armed", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { queue } = queueOn(clock);
    for (let i = 0; i < 1_000; i++) queue.add(`t${i}`, t0 + 1_000 + (i % 7));
    expect(clock.pendingSleeps).toBe(1);
    // An earlier timer replaces the sleep rather than adding one.
    queue.add("early", t0 + 10);
    expect(clock.pendingSleeps).toBe(1);
  });

  it("wakes for a timer added earlier than the one it sleeps for", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { queue, handed } = queueOn(clock);
    queue.add("late", t0 + 1_000);
    queue.add("soon", t0 + 10);
    await clock.advance(10);
    expect(handed).toEqual([{ at: t0 + 10, items: ["soon"] }]);
    await clock.advance(990);
    expect(handed.map((h) => h.items)).toEqual([["soon"], ["late"]]);
  });

  it("hands a timer already due over without time passing", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { queue, handed } = queueOn(clock);
    queue.add("overdue", t0 - 5_000);
    await clock.advance(0);
    expect(handed).toEqual([{ at: t0, items: ["overdue"] }]);
  });

  it("hands nothing over once closed, and takes no new timers", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { queue, handed } = queueOn(clock);
    queue.add("a", t0 + 100);
    queue.close();
    queue.add("b", t0 + 50);
    await clock.advance(1_000);
    expect(handed).toEqual([]);
    expect(clock.pendingSleeps).toBe(0);
  });
});

describe("TimerQueue when handing over fails", () => {
  it("hands the same timers over again later, and keeps the ones behind them on time", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const handed: { at: number; items: string[] }[] = [];
    const errors: string[][] = [];
    let failures = 1;
    const queue = new TimerQueue<string>(
      clock,
      (items) => {
        if (failures-- > 0) throw new Error("store busy");
        handed.push({ at: clock.now().getTime() - t0, items });
      },
      (_error, items) => errors.push([...items]),
      100,
    );
    queue.add("a", t0 + 10);
    queue.add("b", t0 + 50);
    await clock.advance(10);
    expect(errors).toEqual([["a"]]);
    await clock.advance(200);
    expect(handed).toEqual([
      { at: 50, items: ["b"] },
      { at: 110, items: ["a"] },
    ]);
    expect(queue.size).toBe(0);
  });
});
