import { describe, expect, it } from "vitest";
import { ClockAlarm } from "../../laptop/embedded/clock-alarm.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";

function alarmOn(clock: VirtualClock): { alarm: ClockAlarm; rings: number[] } {
  const rings: number[] = [];
  const alarm = new ClockAlarm(clock, () => rings.push(clock.now().getTime()));
  return { alarm, rings };
}

describe("ClockAlarm", () => {
  it("rings once at the time it was set to", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { alarm, rings } = alarmOn(clock);
    alarm.ringBy(t0 + 100);
    await clock.advance(99);
    expect(rings).toEqual([]);
    await clock.advance(1);
    expect(rings).toEqual([t0 + 100]);
    await clock.advance(1_000);
    expect(rings).toEqual([t0 + 100]);
    expect(clock.pendingSleeps).toBe(0);
  });

  it("keeps the earlier of two times, and moving it earlier replaces the pending sleep", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { alarm, rings } = alarmOn(clock);
    alarm.ringBy(t0 + 100);
    alarm.ringBy(t0 + 300);
    alarm.ringBy(t0 + 50);
    expect(clock.pendingSleeps).toBe(1);
    await clock.advance(300);
    expect(rings).toEqual([t0 + 50]);
  });

  it("set later after a clear, rings at the later time on one sleep at a time", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { alarm, rings } = alarmOn(clock);
    alarm.ringBy(t0 + 100);
    await clock.advance(40);
    alarm.clear();
    alarm.ringBy(t0 + 250);
    expect(clock.pendingSleeps).toBe(1);
    await clock.advance(60);
    expect(rings).toEqual([]);
    expect(clock.pendingSleeps).toBe(1);
    await clock.advance(149);
    expect(rings).toEqual([]);
    await clock.advance(1);
    expect(rings).toEqual([t0 + 250]);
  });

  it("cleared, does not ring; closed, leaves no sleep and ignores new times", async () => {
    const clock = new VirtualClock();
    const t0 = clock.now().getTime();
    const { alarm, rings } = alarmOn(clock);
    alarm.ringBy(t0 + 100);
    alarm.clear();
    await clock.advance(200);
    expect(rings).toEqual([]);

    alarm.ringBy(t0 + 300);
    alarm.close();
    expect(clock.pendingSleeps).toBe(0);
    alarm.ringBy(t0 + 400);
    await clock.advance(1_000);
    expect(rings).toEqual([]);
    expect(clock.pendingSleeps).toBe(0);
  });
});
