import { describe, expect, it } from "vitest";
import {
  ActionType,
  firstMismatch,
  history,
  recordedTasks,
  summarizeActions,
  UnsupportedActionError,
} from "../../laptop/durable/history.js";

const at = new Date("2026-01-01T00:00:00.000Z");
const fireAt = new Date("2026-01-01T00:01:00.000Z");

describe("summarizeActions", () => {
  it("finds a continueAsNew anywhere in the list, through compound actions", () => {
    const actions = [
      [
        { actionType: ActionType.CallActivity, functionName: "a", input: 1 },
        {
          actionType: ActionType.WhenAny,
          compoundActions: [
            { actionType: ActionType.WaitForExternalEvent },
            { actionType: ActionType.CreateTimer, fireAt, isCanceled: true },
          ],
        },
        { actionType: ActionType.ContinueAsNew, input: { round: 2 } },
      ],
    ];
    expect(summarizeActions(actions as never)).toEqual({ continueAsNew: { input: { round: 2 } } });
    expect(summarizeActions([[]])).toEqual({ continueAsNew: undefined });
  });

  it.each([
    ["LockEntities", ActionType.LockEntities],
    ["CallHttp", ActionType.CallHttp],
  ])("refuses %s actions by name, even inside a compound action", (name, actionType) => {
    const nested = [[{ actionType: ActionType.WhenAll, compoundActions: [{ actionType }] }]];
    expect(() => summarizeActions(nested as never)).toThrow(UnsupportedActionError);
    expect(() => summarizeActions(nested as never)).toThrow(
      `the local durable runtime does not support ${name} actions`,
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

  it("tells a call to an entity from a signal of the same operation, and reads the operation from the request", () => {
    const request = (signal: boolean) => JSON.stringify({ id: "r-1", operation: "add", signal, input: "1" });
    const sent = recordedTasks([history.eventSent(at, 0, "@counter@a", "op", request(false))]);
    const entity = (signal: boolean) =>
      ({ kind: "entity", name: "add", entityId: "@counter@a", input: 1, signal }) as const;
    expect(firstMismatch(sent, [entity(false)])).toBeUndefined();
    expect(firstMismatch(sent, [entity(true)])).toBe(
      "task 0 was call add on entity @counter@a in history, but replay scheduled signal add on entity @counter@a",
    );
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

describe("history events", () => {
  it("stamp each event with its time, even from a Date changed in place since the last one", () => {
    const moving = new Date("2026-01-01T00:00:00.000Z");
    const started = history.orchestratorStarted(moving);
    expect(history.orchestratorCompleted(moving).Timestamp).toBe("2026-01-01T00:00:00.000Z");
    moving.setTime(moving.getTime() + 1_500);
    expect(history.orchestratorCompleted(moving).Timestamp).toBe("2026-01-01T00:00:01.500Z");
    expect(history.orchestratorStarted(at).Timestamp).toBe("2026-01-01T00:00:00.000Z");
    expect(started.Timestamp).toBe("2026-01-01T00:00:00.000Z");
  });

  it("refuses an invalid time, as toISOString does", () => {
    expect(() => history.orchestratorStarted(new Date(Number.NaN))).toThrow(RangeError);
  });
});
