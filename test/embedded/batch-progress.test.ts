import { describe, expect, it } from "vitest";
import { describeProgress, isSettled } from "../../laptop/embedded/batch-progress.js";
import { PROCESS_STATES } from "../../src/domain/state-record.js";

describe("the demo batch's progress line", () => {
  it("F27: names only the seven states, and says in words what is not yet a state", () => {
    const line = describeProgress({ states: { Pending: 2, Processed: 15 }, queued: 3, deadLettered: 0 });
    expect(line).toBe("3 not yet accepted · Pending 2 · Processed 15");
    const named = line
      .split(" · ")
      .map((part) => part.split(" ")[0])
      .filter((word) => /^[A-Z]/.test(word ?? ""));
    for (const word of named) expect(PROCESS_STATES).toContain(word);
  });

  it("counts the final states and the dead-lettered as settled, nothing else", () => {
    expect(isSettled({ states: { Processed: 18, Error: 1 }, queued: 0, deadLettered: 1 }, 20)).toBe(true);
    expect(isSettled({ states: { Processed: 18, Compensating: 1 }, queued: 0, deadLettered: 1 }, 20)).toBe(
      false,
    );
    expect(isSettled({ states: { Processed: 19 }, queued: 1, deadLettered: 0 }, 20)).toBe(false);
  });
});
