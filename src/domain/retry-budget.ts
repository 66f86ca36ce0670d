import { err, ok, type Result } from "./result.js";
import type { RetryBudgetState } from "./state-record.js";

/**
 * Retry amplification: every layer that retries multiplies the calls that reach a failing partner.
 * These are the layers between the Scheduler and the partner, each as the most times it can run the
 * layer below it for one request.
 */
export interface RetryLayers {
  /** Workflow steps that call the partner. */
  readonly partnerSteps: number;
  /** Attempts of the whole order: the first plus every Supervisor recovery. */
  readonly attemptsPerOrder: number;
  /** Runs of the Agent per step request by the orchestration runtime (activity retry policy; 1 = none). */
  readonly runtimeAttempts: number;
  /** Deliveries of one Agent request by the message broker (maximum delivery count; 1 for an activity). */
  readonly deliveriesPerRequest: number;
  /** Calls the Agent makes per run (its own retry allowance). */
  readonly agentCallsPerRun: number;
  /** Calls per Agent call made by the HTTP client library's own retries (1 = disabled). */
  readonly clientCallsPerCall: number;
}

export function worstCasePartnerCalls(layers: RetryLayers): number {
  return (
    layers.partnerSteps *
    layers.attemptsPerOrder *
    layers.runtimeAttempts *
    layers.deliveriesPerRequest *
    layers.agentCallsPerRun *
    layers.clientCallsPerCall
  );
}

export class RetryAmplificationError extends Error {
  override readonly name = "RetryAmplificationError";
  readonly kind = "RetryAmplification" as const;
  constructor(
    readonly worstCase: number,
    readonly budget: number,
    readonly layers: RetryLayers,
  ) {
    const factors = Object.entries(layers)
      .map(([layer, n]) => `${layer}=${n}`)
      .join(" x ");
    super(
      `retry layers allow ${worstCase} partner calls per order (${factors}) but the end-to-end budget is ${budget}; ` +
        "lower a layer (runtime and client retries are best disabled: set them to 1)",
    );
  }
}

/**
 * Configuration check: the product of every layer's retries must fit the Scheduler's end-to-end budget,
 * so no combination of failures can cost more partner calls than the budget allows.
 */
export function checkRetryLayers(
  layers: RetryLayers,
  budget: number,
): Result<number, RetryAmplificationError> {
  for (const [layer, n] of Object.entries(layers)) {
    if (!Number.isInteger(n) || n < 1)
      throw new RangeError(`retry layer ${layer} must be an integer of at least 1`);
  }
  const worstCase = worstCasePartnerCalls(layers);
  return worstCase <= budget ? ok(worstCase) : err(new RetryAmplificationError(worstCase, budget, layers));
}

/** How many partner calls one Agent call can turn into below the Scheduler (runtime x broker x client). */
export function amplificationBelowScheduler(layers: RetryLayers): number {
  return layers.runtimeAttempts * layers.deliveriesPerRequest * layers.clientCallsPerCall;
}

/** What a grant is for: forward steps may not spend the undo reserve; undos (and resolving a doubt before one) may. */
export type GrantPurpose = "forward" | "undo";

/**
 * Run-time accounting: before each Agent request the Scheduler durably grants it an allowance of calls
 * from the order's budget, charging each granted call at its worst case (`amplification`). Charges are
 * never given back, because a timed-out Agent may still have spent them, so the partner calls of one
 * order can never exceed the budget's limit whatever fails. Forward grants leave the undo reserve
 * untouched, so an order that spent its forward budget can still be compensated.
 */
export function grantAllowance(
  budget: RetryBudgetState,
  requested: number,
  amplification = 1,
  purpose: GrantPurpose = "forward",
): { readonly granted: number; readonly budget: RetryBudgetState } {
  if (!Number.isInteger(requested) || requested < 1) {
    throw new RangeError("requested allowance must be an integer of at least 1");
  }
  if (!Number.isInteger(amplification) || amplification < 1) {
    throw new RangeError("amplification must be an integer of at least 1");
  }
  const affordable = Math.floor(remainingCalls(budget, purpose) / amplification);
  const granted = Math.min(requested, affordable);
  return { granted, budget: { ...budget, granted: budget.granted + granted * amplification } };
}

export function remainingCalls(budget: RetryBudgetState, purpose: GrantPurpose = "forward"): number {
  const usable = purpose === "undo" ? budget.limit : budget.limit - budget.undoReserve;
  return Math.max(0, usable - budget.granted);
}
