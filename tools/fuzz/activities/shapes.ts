/**
 * Each order activity's input, described field by field from its contract
 * (src/orchestrators/order-contracts.ts), so that mutations know what breaks a field.
 */
import { ORDER_STEPS } from "../../../src/domain/partner-operations.js";

export type Rule =
  | { readonly type: "text"; readonly min: number; readonly max: number }
  | { readonly type: "int"; readonly min: number; readonly max: number }
  | { readonly type: "bool" }
  | { readonly type: "instant" }
  | { readonly type: "oneOf"; readonly values: readonly string[] }
  | { readonly type: "literal"; readonly value: number }
  | { readonly type: "object"; readonly shape: Shape };

export interface FieldRule {
  readonly rule: Rule;
  readonly nullable?: boolean;
  /** May be left out: optional, or defaulted by the schema. */
  readonly omissible?: boolean;
}

export type Shape = Readonly<Record<string, FieldRule>>;

const STEPS = ORDER_STEPS;
const FAILURE_KINDS = ["transient", "permanent", "timeout", "stalled", "budget", "operator"];
const field = (rule: Rule, extra: Omit<FieldRule, "rule"> = {}): FieldRule => ({ rule, ...extra });

const ref: Shape = {
  orderId: field({ type: "text", min: 1, max: 64 }),
  instanceId: field({ type: "text", min: 1, max: 128 }),
};
const step = field({ type: "oneOf", values: STEPS });
const failure: Rule = {
  type: "object",
  shape: {
    kind: field({ type: "oneOf", values: FAILURE_KINDS }),
    code: field({ type: "text", min: 1, max: 128 }),
    message: field({ type: "text", min: 0, max: 2_000 }),
    step: field({ type: "oneOf", values: STEPS }, { nullable: true, omissible: true }),
  },
};
const agentRequest: Shape = {
  schemaVersion: field({ type: "literal", value: 2 }),
  requestId: field({ type: "text", min: 1, max: 128 }),
  orderId: field({ type: "text", min: 1, max: 64 }),
  attempt: field({ type: "int", min: 1, max: 1_000_000 }),
  step,
  operation: field({ type: "oneOf", values: ["do", "undo"] }),
  instanceId: field({ type: "text", min: 1, max: 128 }),
  idempotencyKey: field({ type: "text", min: 1, max: 128 }),
  replyEvent: field({ type: "text", min: 1, max: 128 }),
  completeBy: field({ type: "instant" }),
  maxCalls: field({ type: "int", min: 1, max: 1_000 }),
  reference: field({ type: "text", min: 0, max: 256 }, { nullable: true }),
};

export const ACTIVITY_SHAPES = {
  orderBeginAttempt: { ...ref, firstDeadlineFrom: field({ type: "instant" }) },
  orderStartAttempt: {
    ...ref,
    attempt: field({ type: "int", min: 1, max: 1_000_000 }),
    workflowVersion: field({ type: "int", min: 1, max: 1_000 }),
    firstCompleteBy: field({ type: "instant" }),
  },
  orderCallAgent: agentRequest,
  orderRunStep: {
    request: field({ type: "object", shape: agentRequest }),
    next: field({ type: "oneOf", values: STEPS }, { nullable: true }),
  },
  orderSendAgentRequest: agentRequest,
  orderAdvance: {
    ...ref,
    step: field(step.rule, { nullable: true }),
    reference: field({ type: "text", min: 0, max: 256 }, { nullable: true, omissible: true }),
    next: field(
      { type: "object", shape: { step, completeBy: field({ type: "instant" }) } },
      { nullable: true },
    ),
  },
  orderFail: { ...ref, failure: field(failure) },
  orderDeferStep: {
    ...ref,
    step,
    until: field({ type: "instant" }),
    callsMade: field({ type: "int", min: 0, max: 1_000 }),
    reason: field({ type: "text", min: 1, max: 2_000 }),
  },
  orderBeginCompensation: { ...ref, failure: field(failure), completeBy: field({ type: "instant" }) },
  orderResolveDoubt: {
    ...ref,
    step,
    applied: field({ type: "bool" }),
    reference: field({ type: "text", min: 0, max: 256 }, { nullable: true }),
  },
  orderCompensateStep: {
    ...ref,
    step,
    outcome: field({ type: "oneOf", values: ["compensated", "failed"] }),
    failure: field(failure, { nullable: true }),
  },
  orderFinishCompensation: { ...ref, failure: field(failure, { nullable: true, omissible: true }) },
} as const satisfies Record<string, Shape>;

export type ActivityName = keyof typeof ACTIVITY_SHAPES;
export const ACTIVITY_NAMES = Object.keys(ACTIVITY_SHAPES) as ActivityName[];

/** The activities that change the state record; the Agent's two only carry a request. */
export const RECORD_ACTIVITIES: ReadonlySet<ActivityName> = new Set(
  ACTIVITY_NAMES.filter(
    // `orderRunStep` asks the Agent before it touches the record, as `orderCallAgent` does.
    (name) => name !== "orderCallAgent" && name !== "orderSendAgentRequest" && name !== "orderRunStep",
  ),
);
