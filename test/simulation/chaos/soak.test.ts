import { describe, expect, it } from "vitest";
import { judgeRss, terminalAt } from "../../../laptop/simulation/chaos/soak-measures.js";
import { pendingRecord } from "../../support/records.js";

const MB = 1_048_576;

describe("the soak's memory judgement", () => {
  const readings = (mbs: number[]) => mbs.map((m, i) => ({ atSeconds: (i + 1) * 60, bytes: m * MB }));

  it("passes growth of up to 10% past the reading at the end of the warm-up, whatever came before", () => {
    const judgement = judgeRss(readings([150, 300, 310, 320, 330, 300, 329]), 300);
    expect(judgement).toMatchObject({ judged: true, ok: true, baselineMb: 330, peakAfterBaselineMb: 329 });
  });

  it("fails growth of more than 10% after the warm-up", () => {
    const judgement = judgeRss(readings([200, 200, 200, 200, 200, 215, 230]), 300);
    expect(judgement).toMatchObject({
      judged: true,
      ok: false,
      baselineMb: 200,
      peakAfterBaselineMb: 230,
      growth: 0.15,
    });
  });

  it("does not judge a run no longer than its warm-up", () => {
    expect(judgeRss(readings([100, 500]), 300)).toMatchObject({ judged: false, ok: true, growth: null });
    expect(judgeRss(readings([100, 500]), 120)).toMatchObject({ judged: false, ok: true });
  });
});

describe("when an order finished", () => {
  it("is the history entry of its terminal state, and null while it is open", () => {
    const at = "2026-01-01T00:00:05.000Z";
    const history = [
      {
        at,
        actor: "scheduler",
        command: "complete",
        from: "Processing" as const,
        to: "Processed" as const,
        attempt: 1,
        step: null,
        code: null,
      },
    ];
    const record = pendingRecord("o-1", { processState: "Processed", history });
    expect(terminalAt(record)).toBe(Date.parse(at));
    expect(terminalAt(pendingRecord("o-2"))).toBeNull();
  });
});
