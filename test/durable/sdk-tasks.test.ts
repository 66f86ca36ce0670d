import { describe, expect, it } from "vitest";
import { numberedTasks, trackSdkTasks } from "../../laptop/durable/sdk-tasks.js";

describe("numberedTasks", () => {
  it("refuses an executor of a copy of durable-functions it has not hooked, rather than see no tasks", () => {
    trackSdkTasks();
    const foreign = { sequenceNumber: 1, trackOpenTask: () => {}, recordFireAndForgetAction: () => {} };
    expect(() => numberedTasks(foreign)).toThrow(
      /copy of durable-functions the local durable runtime has not hooked/,
    );
    expect(numberedTasks(undefined)).toEqual([]);
  });
});
