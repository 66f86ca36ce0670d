import { z } from "zod";
import { ORDER_STEPS, type StepName } from "./partner-operations.js";
import { traceparentSchema } from "./trace-context.js";
import { integer, oneOf, text } from "./validation.js";

// The steps are declared with their partner operations; an order's steps are named here as everywhere.
export { isStepName, ORDER_STEPS, type StepName } from "./partner-operations.js";

/**
 * What a version's orchestration does beyond the pattern's story (ask the Agent, race the timer,
 * record): the speed-ups it was shipped with. A version keeps its capabilities for life, so its
 * histories schedule on replay exactly the activities they scheduled (docs/versioning.md).
 */
export interface WorkflowCapabilities {
  /**
   * In the Agent's activity form, the Agent's activity records each step that succeeds in time
   * (`runStep`), and the first step runs in the activity that reads the plan (`startAttempt`), its
   * timer started first; the attempts are handed the step timeout and their first step in their input.
   */
  readonly recordsInAgent: boolean;
  /**
   * That first activity goes on to the next steps while each fits inside the first step's deadline,
   * the one the orchestration's timer races it at (orchestrators/activities/step-chain.ts).
   */
  readonly chainsSteps: boolean;
}

export type WorkflowCapability = keyof WorkflowCapabilities;

/** One version of the order workflow: the orchestration that runs it, its steps in order, its speed-ups. */
export interface WorkflowDefinition {
  readonly version: number;
  /** The orchestrator function's name: each version keeps its own, so its histories replay on its code. */
  readonly orchestration: string;
  readonly steps: readonly StepName[];
  readonly capabilities: WorkflowCapabilities;
}

const ONE_ACTIVITY_A_CALL: WorkflowCapabilities = { recordsInAgent: false, chainsSteps: false };

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
    capabilities: ONE_ACTIVITY_A_CALL,
  },
  {
    version: 2,
    orchestration: "orderProcessingV2",
    steps: ["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"],
    capabilities: ONE_ACTIVITY_A_CALL,
  },
  {
    // Version 2's steps; its orchestrator lets the Agent's activity record each step (one activity a step).
    version: 3,
    orchestration: "orderProcessingV3",
    steps: ["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"],
    capabilities: { recordsInAgent: true, chainsSteps: false },
  },
  {
    // Version 2's steps; the Agent's activity also runs the steps that fit inside the deadline it was given.
    version: 4,
    orchestration: "orderProcessingV4",
    steps: ["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"],
    capabilities: { recordsInAgent: true, chainsSteps: true },
  },
];

/** Whether a version this build runs has a capability; false for a version it does not run. */
export function workflowCan(version: number, capability: WorkflowCapability): boolean {
  return WORKFLOWS.find((w) => w.version === version)?.capabilities[capability] === true;
}

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
   * The step timeout the starter runs with: lets an orchestration whose workflow `recordsInAgent` start its
   * first step's timer before the activity that reads its plan. Absent from older inputs: that activity comes first.
   */
  stepTimeoutMs: integer(1, 86_400_000).optional(),
  /** The step the attempt starts with, as the starter saw the record: named if it times out before its plan. */
  firstStep: oneOf(ORDER_STEPS).optional(),
});
export type AttemptInput = z.infer<typeof attemptInputSchema>;
