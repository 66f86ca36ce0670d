import { stepDeadline } from "../../domain/deadline-rules.js";
import { heardProcessing, PARTNER_UNAVAILABLE, type StateRecord, stepOf } from "../../domain/state-record.js";
import { retryDetail } from "../../domain/status-message.js";
import type { ActivityImplementations } from "../activity-contract.js";
import { agentRequestFor } from "../agent-request.js";
import type {
  AttemptPlan,
  AttemptRef,
  ForwardPlan,
  OrderActivityContracts,
  StepStart,
} from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import { runAndRecord } from "./progress.js";
import type { RecordActions } from "./record-actions.js";
import { runStepChain } from "./step-chain.js";
import { undoGrantRequest, undoWork } from "./undo-work.js";

/**
 * `beginAttempt`: the attempt's plan, read once so the orchestrator does no I/O. `startAttempt` (version
 * 3 on): the same with the first step's deadline given, and in the Agent's activity form that step run;
 * version 4 on (`chainSteps`), the steps after it too while they fit inside that deadline.
 */
export function createAttemptActivities(
  deps: OrderActivityDeps,
  actions: RecordActions,
): Pick<ActivityImplementations<OrderActivityContracts>, "beginAttempt" | "startAttempt"> {
  return {
    beginAttempt: (input) =>
      planAttempt(deps, actions, {
        ref: { orderId: input.orderId, instanceId: input.instanceId },
        workflowVersion: input.workflowVersion,
        firstCompleteBy: stepDeadline(input.firstDeadlineFrom, deps.settings.stepTimeoutMs),
      }),
    async startAttempt(input, invocation) {
      const ref: AttemptRef = { orderId: input.orderId, instanceId: input.instanceId };
      const keepStoredDeadline = input.chainSteps === true;
      const plan = await planAttempt(deps, actions, { ...input, ref, keepStoredDeadline });
      if (!plan.owned || plan.mode !== "forward" || !plan.firstStart.ok || plan.agentMode !== "activity") {
        return { plan, firstRun: null };
      }
      // Version 4: an earlier run of this activity gave the step a deadline of its own, which the
      // orchestration's timer must race; it runs the step in an activity of its own, as that run meant.
      if (keepStoredDeadline && plan.firstCompleteBy !== input.firstCompleteBy)
        return { plan, firstRun: null };
      const [first, next] = plan.pendingSteps;
      if (!first) return { plan, firstRun: null };
      const request = agentRequestFor(input, {
        step: first,
        operation: "do",
        completeBy: plan.firstCompleteBy,
        maxCalls: plan.firstStart.allowance,
        reference: null,
      });
      const chainUntil = input.chainSteps ? { chainUntil: plan.firstCompleteBy } : {};
      const firstRun = await runAndRecord(
        deps,
        actions,
        { request, next: next ?? null, ...chainUntil },
        invocation,
      );
      if (!input.chainSteps) return { plan, firstRun };
      return runStepChain(deps, actions, { input, plan, firstRun }, invocation);
    },
  };
}

interface AttemptToPlan {
  readonly ref: AttemptRef;
  /** The version of the orchestration asking; absent in histories recorded before versions were named: 1. */
  readonly workflowVersion: number;
  readonly firstCompleteBy: string;
  /**
   * Version 4 on: the plan's `firstCompleteBy` is the first step's deadline as stored, which differs
   * from the one asked for when an earlier run of the activity started that step with another.
   */
  readonly keepStoredDeadline?: boolean;
}

async function planAttempt(
  deps: OrderActivityDeps,
  actions: RecordActions,
  attempt: AttemptToPlan,
): Promise<AttemptPlan> {
  const { ref } = attempt;
  const record = await deps.states.get(ref.orderId);
  const owned = record?.lockedBy === ref.instanceId;
  if (!record || !owned || (record.processState !== "Processing" && record.processState !== "Compensating")) {
    deps.logger.warn("attempt.notOwner", { ...ref, lockedBy: record?.lockedBy ?? null });
    return { owned: false };
  }
  if (record.workflowVersion !== attempt.workflowVersion) {
    // Only the starter launches attempts, and it launches the record's own version: a bug if seen.
    deps.logger.error("attempt.wrongWorkflowVersion", {
      ...ref,
      attempt: record.attempt,
      workflowVersion: record.workflowVersion,
      orchestrationVersion: attempt.workflowVersion,
    });
    return { owned: false };
  }
  const mode = record.processState === "Compensating" ? "compensate" : "forward";
  deps.logger.info("attempt.started", {
    ...ref,
    attempt: record.attempt,
    failureCount: record.failureCount,
    workflowVersion: record.workflowVersion,
    mode,
  });
  if (mode === "compensate") return compensationPlan(deps, actions, ref);
  return forwardPlan(deps, actions, { ...attempt, ref, record });
}

function planBasics(deps: OrderActivityDeps) {
  return {
    owned: true as const,
    stepTimeoutMs: deps.settings.stepTimeoutMs,
    agentMode: deps.settings.agentMode,
  };
}

/**
 * A compensation to resume: its calls granted from the budget (undo reserve included), then what is
 * still applied or in doubt, undone newest first by the attempt's deadline.
 */
async function compensationPlan(
  deps: OrderActivityDeps,
  actions: RecordActions,
  ref: AttemptRef,
): Promise<AttemptPlan> {
  const granted = await actions.apply(
    ref,
    () => ({
      type: "resumeCompensation",
      instanceId: ref.instanceId,
      now: actions.now(),
      undo: undoGrantRequest(deps),
    }),
    "compensation.resumed",
  );
  if (!granted.ok) return { owned: false };
  return {
    ...planBasics(deps),
    mode: "compensate",
    ...undoWork(granted.record),
    compensateBy: granted.record.completeBy ?? actions.now(),
  };
}

/** The steps still to run and the first of them started. */
async function forwardPlan(
  deps: OrderActivityDeps,
  actions: RecordActions,
  attempt: AttemptToPlan & { readonly record: StateRecord },
): Promise<ForwardPlan> {
  const { ref, record } = attempt;
  // Once per run, and again after a failed attempt (the submitter hears that it is retried, and which step
  // held it up); a re-claim after a deferral tells the submitter nothing new.
  if (!heardProcessing(record)) await actions.notify(record, "processing");
  else {
    const retry = retryOf(record);
    if (retry) await actions.notify(record, "processing", retry);
  }
  // An in-doubt step is pending: it runs again with its idempotency key, applied at most once.
  const completed = record.compensationLog
    .filter(({ step }) => stepOf(record, step)?.status === "Completed")
    .map(({ step, reference }) => ({ step, reference }));
  // The order's own steps, those of the workflow version it was accepted under.
  const pendingSteps = record.steps
    .map((s) => s.name)
    .filter((step) => !completed.some((c) => c.step === step));
  // Reading the plan also starts the first pending step: one update fewer per attempt.
  const first = pendingSteps[0];
  if (!first) {
    const firstStart: StepStart = { ok: false, reason: "refused", detail: "no step left to start" };
    const { firstCompleteBy } = attempt;
    return { ...planBasics(deps), mode: "forward", pendingSteps, completed, firstStart, firstCompleteBy };
  }
  const started = await actions.apply(
    ref,
    () => actions.startStep(ref, first, attempt.firstCompleteBy),
    "step.started",
    { step: first },
  );
  const stored = started.ok ? stepOf(started.record, first)?.completeBy : undefined;
  const firstCompleteBy = (attempt.keepStoredDeadline && stored) || attempt.firstCompleteBy;
  const firstStart = actions.startOf(started, first);
  return { ...planBasics(deps), mode: "forward", pendingSteps, completed, firstStart, firstCompleteBy };
}

/** The retry detail when the attempt before this one failed at a step; null after a deferral. */
function retryOf(record: StateRecord): string | null {
  const failure = record.lastError;
  if (!failure?.step || failure.code === PARTNER_UNAVAILABLE) return null;
  return retryDetail(failure.step, failure.code);
}
