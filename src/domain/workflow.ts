import { z } from "zod";
import { ORDER_STEPS, type StepName } from "./partner-operations.js";
import { traceparentSchema } from "./trace-context.js";
import { integer, oneOf, text } from "./validation.js";

// The steps are declared with their partner operations; an order's steps are named here as everywhere.
export { isStepName, ORDER_STEPS, type StepName } from "./partner-operations.js";

/** One version of the order workflow: the orchestration that runs it and its steps, in order. */
export interface WorkflowDefinition {
  readonly version: number;
  /** The orchestrator function's name: each version keeps its own, so its histories replay on its code. */
  readonly orchestration: string;
  readonly steps: readonly StepName[];
}

/**
 * Every version an order may be pinned to. An order runs, recovers and compensates under the version it
 * was accepted with, whatever the default is by then; a version stays here until no order needs it
 * (`GET /api/stats`, `workflowVersions`). docs/versioning.md says how to add and remove one.
 */
export const WORKFLOWS: readonly WorkflowDefinition[] = [
  {
    version: 1,
    orchestration: "orderProcessing",
    steps: ["reserveInventory", "chargePayment", "arrangeShipment"],
  },
  {
    version: 2,
    orchestration: "orderProcessingV2",
    steps: ["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"],
  },
  {
    // Version 2's steps; its orchestrator lets the Agent's activity record each step (one activity a step).
    version: 3,
    orchestration: "orderProcessingV3",
    steps: ["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"],
  },
  {
    // Version 2's steps; the Agent's activity also runs the steps that fit inside the deadline it was given.
    version: 4,
    orchestration: "orderProcessingV4",
    steps: ["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"],
  },
];

/**
 * The first version whose orchestrator lets the Agent's activity record each step and start the attempt
 * (orchestrators/order-processing.ts), and whose attempts are handed the step timeout in their input.
 * Older versions keep their activities and input as they were, so their histories replay, and a build
 * rolled back still reads the inputs of their attempts.
 */
export const RECORDS_IN_AGENT_FROM = 3;

/**
 * The first version whose attempts let the Agent's activity that runs the first step go on to the next
 * steps while they fit inside that step's deadline, the one the orchestration's timer is set at
 * (orchestrators/activities/step-chain.ts). Older versions run one step an activity, as they did.
 */
export const CHAINS_STEPS_FROM = 4;

/** The version new orders are pinned to unless the WORKFLOW_VERSION setting names another. */
export const LATEST_WORKFLOW_VERSION = Math.max(...WORKFLOWS.map((w) => w.version));

export const WORKFLOW_VERSIONS: readonly number[] = WORKFLOWS.map((w) => w.version);

/** The most steps any version runs: what deadlines and budgets must leave room for. */
export const MOST_STEPS = Math.max(...WORKFLOWS.map((w) => w.steps.length));

export function isWorkflowVersion(version: number): boolean {
  return WORKFLOW_VERSIONS.includes(version);
}

/** The definition of a version this build has; throws for one it does not (records are validated first). */
export function workflowOf(version: number): WorkflowDefinition {
  const workflow = WORKFLOWS.find((w) => w.version === version);
  if (!workflow) {
    throw new RangeError(
      `workflow version ${version} is not one this deployment runs (${WORKFLOW_VERSIONS.join(", ")})`,
    );
  }
  return workflow;
}

/** The stable key the partner service deduplicates on: the same for every attempt and every retry. */
export function idempotencyKeyFor(orderId: string, step: StepName): string {
  return `${orderId}:${step}`;
}

/** Orchestration instance id of one attempt; also the value of `lockedBy` while that attempt owns the record. */
export function instanceIdFor(orderId: string, attempt: number): string {
  return `${orderId}:${attempt}`;
}

/** Stable message id of one step's request within one attempt (Service Bus duplicate detection key). */
export function requestIdFor(orderId: string, attempt: number, step: StepName): string {
  return `${orderId}:${attempt}:${step}`;
}

/** The event a step's reply is raised under: one name per step and operation, so a stale reply can't satisfy another wait. */
export function replyEventName(step: StepName, operation: "do" | "undo"): string {
  return `reply:${step}:${operation}`;
}

/** The input each attempt's orchestration starts with; its instance id is `instanceIdFor(orderId, attempt)`. */
export const attemptInputSchema = z.strictObject({
  orderId: text(1, 64),
  attempt: integer(1, 1_000_000),
  /** The attempt's span, started by the starter: what the orchestration hands its Agent requests. */
  traceparent: traceparentSchema.optional(),
  /**
   * The step timeout the starter runs with: lets an orchestration of version 3 on start its first step's
   * timer before the activity that reads its plan. Absent from older inputs: that activity comes first.
   */
  stepTimeoutMs: integer(1, 86_400_000).optional(),
  /** The step the attempt starts with, as the starter saw the record: named if it times out before its plan. */
  firstStep: oneOf(ORDER_STEPS).optional(),
});
export type AttemptInput = z.infer<typeof attemptInputSchema>;
