import { describe, expect, it } from "vitest";
import { RECORD_MARGIN_MS } from "../../src/domain/deadline-rules.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { agentRequestFor } from "../../src/orchestrators/agent-request.js";
import {
  ORDER_ACTIVITIES,
  type StartedAttempt,
  type StepRun,
} from "../../src/orchestrators/order-contracts.js";
import { T0 } from "../support/records.js";
import {
  INSTANCE,
  STEP_TIMEOUT_MS,
  setUpOrderActivities as setUp,
  startAttempt,
  succeeded,
} from "./order-activity-harness.js";

describe("the activities that run a step and record it (workflow version 3 on)", () => {
  it("starts the attempt, runs its first step and starts the second, in one activity", async () => {
    const { call, asked, states } = await setUp(succeeded);
    const firstCompleteBy = addMilliseconds(T0, STEP_TIMEOUT_MS);
    const started = await call<StartedAttempt>(ORDER_ACTIVITIES.startAttempt.name, {
      orderId: "ord-1",
      instanceId: INSTANCE,
      attempt: 1,
      workflowVersion: 3,
      firstCompleteBy,
    });
    expect(started.plan).toMatchObject({ owned: true, mode: "forward", firstCompleteBy });
    expect(asked.map((r) => [r.step, r.completeBy, r.instanceId])).toEqual([
      ["reserveInventory", firstCompleteBy, INSTANCE],
    ]);
    // The request is the one the orchestration would have built.
    expect(asked[0]).toEqual(
      agentRequestFor(
        { orderId: "ord-1", attempt: 1, instanceId: INSTANCE },
        {
          step: "reserveInventory",
          operation: "do",
          completeBy: firstCompleteBy,
          maxCalls: 3,
          reference: null,
        },
      ),
    );
    expect(started.firstRun?.advanced).toMatchObject({ ok: true, next: { ok: true } });
    const record = await states.get("ord-1");
    expect(record?.steps.map((s) => s.status)).toEqual(["Completed", "Running", "NotStarted", "NotStarted"]);
    expect(record?.completeBy).toBe(started.firstRun?.advanced?.completeBy);
  });

  it("records the last step and finishes the order, nudging the starter", async () => {
    const { call, states, settled } = await setUp(succeeded);
    await startAttempt(call);
    const steps = ["chargePayment", "arrangeShipment", "notifyCustomer"] as const;
    for (const [i, step] of steps.entries()) {
      const current = await states.get("ord-1");
      const request = agentRequestFor(
        { orderId: "ord-1", attempt: 1, instanceId: INSTANCE },
        { step, operation: "do", completeBy: current?.completeBy ?? T0, maxCalls: 3, reference: null },
      );
      const run = await call<StepRun>(ORDER_ACTIVITIES.runStep.name, { request, next: steps[i + 1] ?? null });
      expect(run.advanced?.ok).toBe(true);
    }
    expect(await states.get("ord-1")).toMatchObject({ processState: "Processed", lockedBy: null });
    expect(settled).toEqual(["settled"]);
  });

  it("records nothing for a reply that comes after the step's deadline: the orchestration decides", async () => {
    const { call, clock, states } = await setUp(async (request) => {
      await clock.advance(STEP_TIMEOUT_MS); // the partner answers just as the deadline passes
      return succeeded(request);
    });
    const started = await startAttempt(call);
    expect(started.firstRun).toMatchObject({ reply: { outcome: "succeeded" }, advanced: null });
    expect((await states.get("ord-1"))?.steps[0]?.status).toBe("Running");
  });

  it("hands a repeated run the next step's deadline as stored, not a new one", async () => {
    const { call, clock, states } = await setUp(succeeded);
    await startAttempt(call);
    const current = await states.get("ord-1");
    const request = agentRequestFor(
      { orderId: "ord-1", attempt: 1, instanceId: INSTANCE },
      {
        step: "chargePayment",
        operation: "do",
        completeBy: current?.completeBy ?? T0,
        maxCalls: 3,
        reference: null,
      },
    );
    const input = { request, next: "arrangeShipment" };
    const first = await call<StepRun>(ORDER_ACTIVITIES.runStep.name, input);
    await clock.advance(100); // the activity runs again: its result was lost before it was saved
    const again = await call<StepRun>(ORDER_ACTIVITIES.runStep.name, input);
    expect(again.advanced?.completeBy).toBe(first.advanced?.completeBy);
    expect((await states.get("ord-1"))?.completeBy).toBe(first.advanced?.completeBy);
  });

  it("leaves a reply that comes less than RECORD_MARGIN_MS before the deadline to the orchestration", async () => {
    const { call, clock, states } = await setUp(async (request) => {
      await clock.advance(STEP_TIMEOUT_MS - RECORD_MARGIN_MS / 2);
      return succeeded(request);
    });
    const started = await startAttempt(call);
    expect(started.firstRun).toMatchObject({ reply: { outcome: "succeeded" }, advanced: null });
    expect((await states.get("ord-1"))?.steps[0]?.status).toBe("Running");
  });

  it("records nothing for a refusal: the orchestration fails or compensates the order", async () => {
    const { call, states } = await setUp((request) => ({
      ...succeeded(request),
      outcome: "failed",
      reference: null,
      fault: { kind: "permanent", code: "OutOfStock", message: "none left" },
    }));
    const started = await startAttempt(call);
    expect(started.firstRun?.advanced).toBeNull();
    expect((await states.get("ord-1"))?.steps[0]?.status).toBe("Running");
  });

  it("answers with the plan alone, running nothing, for an attempt that does not own the record", async () => {
    const { call, asked } = await setUp(succeeded);
    const started = await call<StartedAttempt>(ORDER_ACTIVITIES.startAttempt.name, {
      orderId: "ord-1",
      instanceId: "ord-1:7",
      attempt: 7,
      workflowVersion: 3,
      firstCompleteBy: addMilliseconds(T0, STEP_TIMEOUT_MS),
    });
    expect(started).toEqual({ plan: { owned: false }, firstRun: null });
    expect(asked).toEqual([]);
  });
});
