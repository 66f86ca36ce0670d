/**
 * The dashboard's model of one order's life (web/dashboard/order-life.js), derived from histories the
 * domain's transitions wrote: lanes by attempt, bars by how each step ended, marks for the Supervisor
 * and the operator, and what the history no longer holds.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { HistoryEntry } from "../../src/domain/record-history.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { T0 } from "../support/records.js";
import { compensatedLife, type OrderLife, resubmittedLife, runningLife } from "./order-lives.js";

interface Bar {
  step: string;
  attempt: number;
  undo: boolean;
  start: number;
  end: number;
  outcome: string;
}
interface Life {
  lanes: { attempt: number; compensation: boolean; start: number; end: number; bars: Bar[] }[];
  marks: { at: number; kind: string; label: string }[];
  start: number | null;
  end: number | null;
  earlier: number;
}
interface OrderLifeModule {
  orderLife(
    record: OrderLife["record"],
    history: { entries: readonly HistoryEntry[]; earlier: { entries: number } | null },
    now: number,
  ): Life;
}

const modulePath = pathToFileURL(join(import.meta.dirname, "../../web/dashboard/order-life.js")).href;
const { orderLife } = (await import(modulePath)) as OrderLifeModule;

function draw({ record }: OrderLife, now = Date.parse(T0) + 3_600_000): Life {
  return orderLife(record, { entries: record.history, earlier: record.historySummary }, now);
}

/** The picture as the tests name it: per attempt, `step:outcome` of each bar. */
function named(life: Life): Record<number, string[]> {
  return Object.fromEntries(
    life.lanes.map((lane) => [
      lane.attempt,
      lane.bars.map((b) => `${b.undo ? "undo " : ""}${b.step}:${b.outcome}`),
    ]),
  );
}

describe("an order's life as the dashboard draws it", () => {
  it("draws a lane per attempt, recovered steps in doubt, and the undos of a compensation an operator asked for", () => {
    const order = compensatedLife("ord-c", T0);
    const life = draw(order);
    expect(named(life)).toEqual(order.picture.lanes);
    expect(life.marks.map((m) => m.kind)).toEqual(order.picture.marks);
    expect(life.lanes.map((l) => l.compensation)).toEqual([false, false, true]);
    // Bars run from the transition that started them to the one that ended them.
    const at = (ms: number) => Date.parse(addMilliseconds(T0, ms));
    const [reserve, charge] = life.lanes[0]?.bars ?? [];
    expect([reserve?.start, reserve?.end, charge?.start, charge?.end]).toEqual([
      at(100),
      at(1_200),
      at(1_200),
      at(40_000),
    ]);
    // The undo of the doubtful step starts where the compensation attempt resumed, its doubt resolved within.
    const [undoCharge, undoReserve] = life.lanes[2]?.bars ?? [];
    expect([undoCharge?.start, undoCharge?.end, undoReserve?.start, undoReserve?.end]).toEqual([
      at(601_100),
      at(603_000),
      at(603_000),
      at(604_000),
    ]);
    expect(life.marks[2]?.label).toBe(
      `Operator compensate at ${addMilliseconds(T0, 600_000)}: Error → Compensating, CompensationRequested`,
    );
    expect(life.marks[1]?.label).toContain("Supervisor recovery");
    expect(life.marks[1]?.label).toContain("Processing → Error, RecoveriesExhausted");
    expect([life.start, life.end]).toEqual([at(0), at(604_100)]);
  });

  it("draws a failed step, the operator's resubmit, and the attempt that processed the order", () => {
    const order = resubmittedLife("ord-r", T0);
    const life = draw(order);
    expect(named(life)).toEqual(order.picture.lanes);
    expect(life.marks.map((m) => m.kind)).toEqual(order.picture.marks);
  });

  it("runs the bar of the step in flight up to now, and shows a step deferred for an open breaker", () => {
    const order = runningLife("ord-run", T0);
    const now = Date.parse(addMilliseconds(T0, 9_000));
    const life = draw(order, now);
    expect(named(life)).toEqual(order.picture.lanes);
    expect(life.lanes[1]?.bars[1]?.end).toBe(now);
    expect(life.lanes[1]?.end).toBe(now);
  });

  it("draws what the history kept when its oldest transitions were folded away, and counts them", () => {
    const { record } = compensatedLife("ord-f", T0);
    // The first attempt's claim and steps folded into the summary: only its recovery is left of it.
    const kept = record.history.slice(4);
    expect(kept[0]).toMatchObject({ actor: "supervisor", command: "recover", attempt: 1 });
    const life = orderLife(record, { entries: kept, earlier: { entries: 4 } }, Date.parse(T0));
    expect(life.earlier).toBe(4);
    expect(named(life)).toEqual({
      2: ["chargePayment:in doubt"],
      3: ["undo chargePayment:undone", "undo reserveInventory:undone"],
    });
    expect(life.marks.map((m) => m.kind)).toEqual(["recovery", "recovery", "operator"]);
  });

  it("draws nothing for an order not yet claimed", () => {
    const { record } = runningLife("ord-new", T0);
    const life = orderLife(record, { entries: [], earlier: null }, Date.parse(T0));
    expect(life).toMatchObject({ lanes: [], marks: [], start: null, end: null, earlier: 0 });
  });
});
