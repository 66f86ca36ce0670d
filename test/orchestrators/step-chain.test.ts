/**
 * Workflow version 4: the activity that runs an attempt's first step goes on to the next steps while each
 * can be started with the first step's deadline and at least half a step timeout left before it.
 */
import { describe, expect, it } from "vitest";
import type { AgentRequest, AgentResponse } from "../../src/domain/agent-messages.js";
import { CHAIN_MIN_REMAINING_SHARE } from "../../src/domain/deadline-rules.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { T0 } from "../support/records.js";
import { STEP_TIMEOUT_MS, setUpOrderActivities, startAttempt, succeeded } from "./order-activity-harness.js";

const FIRST_DEADLINE = addMilliseconds(T0, STEP_TIMEOUT_MS);

/** A partner that answers every step but `step`, which it answers with `fault`. */
function failingAt(step: string, fault: NonNullable<AgentResponse["fault"]>) {
  return (request: AgentRequest): AgentResponse =>
    request.step === step
      ? { ...succeeded(request), outcome: "failed", reference: null, fault }
      : succeeded(request);
}
const STEPS = ["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"];

describe("an attempt's steps run by one activity (workflow version 4)", () => {
  it("runs every step that fits inside the first step's deadline, each started with it and then completed", async () => {
    const seenAtCall: unknown[] = [];
    const { call, asked, states, settled } = await setUpOrderActivities(async (request) => {
      // What the record holds as the call begins: the step started, with the request's deadline and calls.
      const step = (await states.get("ord-1"))?.steps.find((s) => s.name === request.step);
      seenAtCall.push([
        step?.status,
        step?.completeBy === request.completeBy,
        step?.allowance === request.maxCalls,
      ]);
      return succeeded(request);
    }, 4);
    const started = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    expect(asked.map((r) => [r.step, r.completeBy, r.maxCalls])).toEqual(
      STEPS.map((step) => [step, FIRST_DEADLINE, 3]),
    );
    // Each call kept its own idempotency key, as in an activity of its own.
    expect(new Set(asked.map((r) => r.idempotencyKey)).size).toBe(4);
    expect(started.plan).toMatchObject({
      owned: true,
      mode: "forward",
      pendingSteps: ["notifyCustomer"],
      completed: STEPS.slice(0, 3).map((step) => ({ step, reference: `ref-${step}` })),
      firstStart: { ok: true },
      firstCompleteBy: FIRST_DEADLINE,
    });
    expect(started.firstRun).toMatchObject({ reply: { step: "notifyCustomer" }, advanced: { ok: true } });
    const record = await states.get("ord-1");
    expect(record).toMatchObject({ processState: "Processed", lockedBy: null });
    expect(record?.steps.map((s) => [s.status, s.completeBy])).toEqual(
      STEPS.map(() => ["Completed", FIRST_DEADLINE]),
    );
    const commands = record?.history.map((entry) => `${entry.command}:${entry.step ?? ""}`);
    expect(commands).toEqual([
      "claim:",
      ...STEPS.flatMap((step) => [`startStep:${step}`, `completeStep:${step}`]),
      "finish:",
    ]);
    expect(settled).toEqual(["settled"]);
    expect(seenAtCall).toEqual(STEPS.map(() => ["Running", true, true]));
  });

  it("gives the next step a deadline of its own once less than half a step timeout is left, and stops there", async () => {
    const slowly = STEP_TIMEOUT_MS * CHAIN_MIN_REMAINING_SHARE * 0.6; // two replies use more than half
    const { call, asked, clock, states } = await setUpOrderActivities(async (request: AgentRequest) => {
      await clock.advance(slowly);
      return succeeded(request);
    }, 4);
    const started = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    expect(asked.map((r) => r.step)).toEqual(["reserveInventory", "chargePayment"]);
    const ownDeadline = addMilliseconds(T0, 2 * slowly + STEP_TIMEOUT_MS);
    expect(started.plan).toMatchObject({
      pendingSteps: STEPS.slice(1),
      completed: [{ step: "reserveInventory", reference: "ref-reserveInventory" }],
    });
    expect(started.firstRun?.advanced).toMatchObject({ ok: true, completeBy: ownDeadline });
    const record = await states.get("ord-1");
    expect(record?.steps.map((s) => s.status)).toEqual(["Completed", "Completed", "Running", "NotStarted"]);
    expect(record?.completeBy).toBe(ownDeadline);
  });

  it("leaves the next step to the orchestration when a slow record write used up more than half its time", async () => {
    // The write that completes the first step and starts the second takes 60% of a step timeout.
    const { call, asked, states } = await setUpOrderActivities(succeeded, 4, (nth) =>
      nth === 2 ? STEP_TIMEOUT_MS * 0.6 : 0,
    );
    const started = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    expect(asked.map((r) => r.step)).toEqual(["reserveInventory"]);
    expect(started.plan).toMatchObject({ pendingSteps: STEPS, completed: [] });
    expect(started.firstRun?.advanced).toMatchObject({ ok: true, completeBy: FIRST_DEADLINE });
    const record = await states.get("ord-1");
    expect(record?.steps.map((s) => [s.status, s.completeBy])).toEqual([
      ["Completed", FIRST_DEADLINE],
      ["Running", FIRST_DEADLINE],
      ["NotStarted", null],
      ["NotStarted", null],
    ]);
  });

  it("stops at a refusal, with the steps completed before it in the plan for the orchestration to undo", async () => {
    const { call, asked, states } = await setUpOrderActivities(
      failingAt("arrangeShipment", { kind: "permanent", code: "NoCarrier", message: "no carrier" }),
      4,
    );
    const started = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    expect(asked.map((r) => r.step)).toEqual(STEPS.slice(0, 3));
    expect(started.plan).toMatchObject({
      pendingSteps: ["arrangeShipment", "notifyCustomer"],
      completed: STEPS.slice(0, 2).map((step) => ({ step, reference: `ref-${step}` })),
      firstStart: { ok: true },
    });
    expect(started.firstRun).toMatchObject({ reply: { outcome: "failed" }, advanced: null });
    const record = await states.get("ord-1");
    expect(record?.steps.map((s) => s.status)).toEqual(["Completed", "Completed", "Running", "NotStarted"]);
    expect(record?.compensationLog.map((entry) => entry.step)).toEqual(STEPS.slice(0, 2));
  });

  it("stops at a step the breaker defers, that step first in the plan for the orchestration to defer", async () => {
    const { call, asked } = await setUpOrderActivities(
      failingAt("chargePayment", {
        kind: "unavailable",
        code: "BreakerOpen",
        message: "the breaker is open",
      }),
      4,
    );
    const started = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    expect(asked.map((r) => r.step)).toEqual(STEPS.slice(0, 2));
    expect(started.plan).toMatchObject({
      pendingSteps: STEPS.slice(1),
      completed: [{ step: "reserveInventory", reference: "ref-reserveInventory" }],
    });
    expect(started.firstRun).toMatchObject({ reply: { fault: { kind: "unavailable" } }, advanced: null });
  });

  it("leaves to the orchestration a step an earlier run gave a deadline of its own, calling nothing", async () => {
    const slowly = STEP_TIMEOUT_MS * 0.6; // less than half a step timeout left after the first reply
    const { call, asked, clock } = await setUpOrderActivities(async (request: AgentRequest) => {
      await clock.advance(slowly);
      return succeeded(request);
    }, 4);
    const first = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    const ownDeadline = addMilliseconds(T0, slowly + STEP_TIMEOUT_MS);
    expect(first.firstRun?.advanced).toMatchObject({ ok: true, completeBy: ownDeadline });
    // The run's result was lost with its host: the runtime runs the activity again with the same input.
    const again = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    expect(again).toMatchObject({
      plan: { pendingSteps: STEPS.slice(1), firstCompleteBy: ownDeadline, firstStart: { ok: true } },
      firstRun: null,
    });
    expect(asked.map((r) => r.step)).toEqual(["reserveInventory"]);
  });

  it("runs again from the step it was in when it broke, with that step's idempotency key", async () => {
    let breakOnShipment = true;
    const { call, asked, states } = await setUpOrderActivities((request) => {
      if (request.step === "arrangeShipment" && breakOnShipment) {
        breakOnShipment = false;
        throw new Error("the host went down mid-call");
      }
      return succeeded(request);
    }, 4);
    await expect(startAttempt(call, { workflowVersion: 4, chainSteps: true })).rejects.toThrow(/went down/);
    expect((await states.get("ord-1"))?.steps.map((s) => s.status)).toEqual([
      "Completed",
      "Completed",
      "Running",
      "NotStarted",
    ]);
    // The runtime runs the activity again with the same input.
    const again = await startAttempt(call, { workflowVersion: 4, chainSteps: true });
    const shipments = asked.filter((r) => r.step === "arrangeShipment");
    expect(shipments).toHaveLength(2);
    expect(shipments[1]?.idempotencyKey).toBe(shipments[0]?.idempotencyKey);
    expect(asked.filter((r) => r.step === "reserveInventory")).toHaveLength(1);
    expect(again.plan).toMatchObject({ pendingSteps: ["notifyCustomer"] });
    expect(await states.get("ord-1")).toMatchObject({ processState: "Processed" });
  });

  it("runs one step when not asked to chain, as version 3 does", async () => {
    const { call, asked } = await setUpOrderActivities(succeeded, 4);
    const started = await startAttempt(call, { workflowVersion: 4 });
    expect(asked.map((r) => r.step)).toEqual(["reserveInventory"]);
    expect(started.plan).toMatchObject({ pendingSteps: STEPS });
  });
});
