import { describe, expect, it } from "vitest";
import {
  ActionType,
  firstMismatch,
  history,
  recordedTasks,
  scheduledTasks,
  UnsupportedActionError,
} from "./history.js";

const at = new Date("2026-01-01T00:00:00.000Z");
const fireAt = new Date("2026-01-01T00:01:00.000Z");

describe("scheduledTasks", () => {
  it("numbers activities and timers depth first through compound actions, skipping event waits", () => {
    const actions = [
      [
        { actionType: ActionType.CallActivity, functionName: "a", input: 1 },
        {
          actionType: ActionType.WhenAny,
          compoundActions: [
            { actionType: ActionType.WaitForExternalEvent },
            {
              actionType: ActionType.WhenAll,
              compoundActions: [{ actionType: ActionType.CallActivity, functionName: "b" }],
            },
            { actionType: ActionType.CreateTimer, fireAt, isCanceled: true },
          ],
        },
      ],
    ];
    expect(scheduledTasks(actions as never)).toEqual([
      { kind: "activity", name: "a", input: 1 },
      { kind: "activity", name: "b", input: undefined },
      { kind: "timer", fireAt, canceled: true },
    ]);
  });

  it("refuses actions the runtime cannot carry out", () => {
    expect(() => scheduledTasks([[{ actionType: ActionType.CallSubOrchestrator }]] as never)).toThrow(
      UnsupportedActionError,
    );
  });
});

describe("firstMismatch", () => {
  const recorded = recordedTasks([
    history.orchestratorStarted(at),
    history.taskScheduled(at, 0, "a", "1"),
    history.timerCreated(at, 1, fireAt),
  ]);

  it("accepts a replay that schedules the recorded tasks and more", () => {
    const replay = [
      { kind: "activity", name: "a", input: 1 },
      { kind: "timer", fireAt, canceled: true },
      { kind: "activity", name: "c", input: 2 },
    ] as const;
    expect(firstMismatch(recorded, replay)).toBeUndefined();
  });

  it("names the first task that differs in kind, name or timer deadline, or that went missing", () => {
    expect(firstMismatch(recorded, [{ kind: "activity", name: "z", input: 1 }])).toBe(
      "task 0 was activity a in history, but replay scheduled activity z",
    );
    const later = new Date(fireAt.getTime() + 1);
    expect(
      firstMismatch(recorded, [
        { kind: "activity", name: "a", input: 1 },
        { kind: "timer", fireAt: later, canceled: false },
      ]),
    ).toBe(
      "task 1 was timer at 2026-01-01T00:01:00.000Z in history, but replay scheduled timer at 2026-01-01T00:01:00.001Z",
    );
    expect(firstMismatch(recorded, [{ kind: "activity", name: "a", input: 1 }])).toBe(
      "history has timer at 2026-01-01T00:01:00.000Z as task 1, but the orchestrator no longer schedules it",
    );
  });
});
