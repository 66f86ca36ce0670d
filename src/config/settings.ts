import { stepsFitInAttempt } from "../domain/deadline-rules.js";
import { checkRetryLayers, type RetryLayers, worstCasePartnerCalls } from "../domain/retry-budget.js";
import type { RecoveryPolicy } from "../domain/transition-commands.js";
import { LATEST_WORKFLOW_VERSION, MOST_STEPS, WORKFLOW_VERSIONS } from "../domain/workflow.js";
import { type BreakerSettings, loadBreakerSettings } from "./breaker-settings.js";
import { type Environment, SettingsError } from "./settings-error.js";

export { type Environment, SettingsError } from "./settings-error.js";

import { PARTNER_ACCESS_KEY_SETTING } from "./names.js";

/**
 * Every setting the handlers read, in one place, validated once at start-up. Names follow app-setting
 * conventions so the same names work in local.settings.json, Azure app settings and the environment.
 */
export interface PipelineSettings {
  /** How long a claimed attempt may take before the Supervisor may recover it (`completeBy` at claim). */
  readonly attemptTimeoutMs: number;
  /** Deadline of one step: the durable timer the reply races against. */
  readonly stepTimeoutMs: number;
  /** Partner calls the Scheduler grants an Agent for one step request. */
  readonly agentCallsPerStep: number;
  /** The end-to-end budget of partner calls one order may cost, across every layer. */
  readonly retryBudgetPerOrder: number;
  /**
   * Calls of that budget set aside when an order is accepted, so it can always be compensated: the
   * worst case of every compensation attempt (each undo, and one in-doubt step resolved first).
   */
  readonly undoReservePerOrder: number;
  readonly recovery: RecoveryPolicy;
  /**
   * A step's timer that fires this late, or an attempt's orchestration still running this far past its
   * deadline, means its host was down: the Supervisor does not charge the order (supervisor/interruptions.ts).
   */
  readonly lateTimerMs: number;
  /**
   * The longest an order waits in one run of deferrals for an open circuit breaker, from its first
   * deferral: past it the order is parked in `Error` (`PartnerUnavailable`) for an operator (F24-4).
   */
  readonly maxDeferralMs: number;
  /** The partner operations' circuit breakers (breaker-settings.ts). */
  readonly breaker: BreakerSettings;
  /** Admission control: the starter claims no more once this many orders are Processing. */
  readonly maxInFlight: number;
  /** Admission for submitters: past this many `Pending` orders, `POST /api/orders` answers 429. */
  readonly maxPending: number;
  readonly starterPageSize: number;
  readonly supervisorPageSize: number;
  readonly supervisorMaxPages: number;
  readonly supervisorLeaseMs: number;
  readonly agentBackoff: { readonly baseMs: number; readonly capMs: number };
  readonly partnerCallTimeoutMs: number;
  readonly agentMode: "activity" | "queue";
  /** Deliveries of one Agent request by the broker (queue form only): a retry layer of its own. */
  readonly agentRequestMaxDeliveries: number;
  /**
   * Days a `Processed` or `Compensated` record, and the orchestration history of its attempts, is kept
   * after its last change. `Error` and `CompensationFailed` records are kept until an operator acts.
   */
  readonly retentionDays: number;
  /** The workflow version new orders are pinned to; orders already accepted keep their own. */
  readonly workflowVersion: number;
  /** Sent to the partner as `x-partner-key` on every call when set (PARTNER_ACCESS_KEY). */
  readonly partnerAccessKey?: string;
}

interface IntegerSetting {
  readonly name: string;
  readonly defaultValue: number;
  readonly min: number;
  readonly max: number;
}

const int = (name: string, defaultValue: number, min: number, max: number): IntegerSetting => ({
  name,
  defaultValue,
  min,
  max,
});

const MINUTE = 60_000;

/** Each integer setting with its default and range; docs/configuration.md lists the same. */
export const INTEGER_SETTINGS = {
  attemptTimeoutMs: int("ATTEMPT_TIMEOUT_MS", 2 * MINUTE, 1_000, 24 * 60 * MINUTE),
  stepTimeoutMs: int("STEP_TIMEOUT_MS", 30_000, 100, 60 * MINUTE),
  agentCallsPerStep: int("AGENT_CALLS_PER_STEP", 3, 1, 100),
  retryBudgetPerOrder: int("RETRY_BUDGET_PER_ORDER", 500, 1, 100_000),
  maxRecoveries: int("MAX_RECOVERIES", 5, 0, 1_000),
  // Host downtime is not the order's fault (supervisor/interruptions.ts): how many times an order is spared.
  maxHostInterruptions: int("MAX_HOST_INTERRUPTIONS", 10, 0, 1_000),
  // A step's timer firing this late after its deadline means nobody was running the orchestration.
  lateTimerMs: int("LATE_TIMER_MS", 15_000, 1_000, 60 * MINUTE),
  // An order waits no longer than this for an open breaker before an operator hears of it; 0 parks it at
  // its first deferral.
  maxDeferralMs: int("MAX_DEFERRAL_MS", 10 * MINUTE, 0, 7 * 24 * 60 * MINUTE),
  recoveryBackoffBaseMs: int("RECOVERY_BACKOFF_BASE_MS", 1_000, 0, 24 * 60 * MINUTE),
  recoveryBackoffCapMs: int("RECOVERY_BACKOFF_CAP_MS", MINUTE, 0, 24 * 60 * MINUTE),
  extendedBackoffAfter: int("EXTENDED_BACKOFF_AFTER", 3, 0, 1_000),
  extendedBackoffMs: int("EXTENDED_BACKOFF_MS", 5 * MINUTE, 0, 7 * 24 * 60 * MINUTE),
  maxInFlight: int("MAX_IN_FLIGHT", 200, 1, 100_000),
  maxPending: int("MAX_PENDING", 10_000, 1, 10_000_000),
  starterPageSize: int("STARTER_PAGE_SIZE", 100, 1, 1_000),
  supervisorPageSize: int("SUPERVISOR_PAGE_SIZE", 100, 1, 1_000),
  supervisorMaxPages: int("SUPERVISOR_MAX_PAGES", 10, 1, 10_000),
  supervisorLeaseMs: int("SUPERVISOR_LEASE_MS", 30_000, 15_000, 60_000),
  agentBackoffBaseMs: int("AGENT_BACKOFF_BASE_MS", 200, 0, MINUTE),
  agentBackoffCapMs: int("AGENT_BACKOFF_CAP_MS", 5_000, 0, 10 * MINUTE),
  partnerCallTimeoutMs: int("PARTNER_CALL_TIMEOUT_MS", 10_000, 100, 10 * MINUTE),
  agentRequestMaxDeliveries: int("AGENT_REQUEST_MAX_DELIVERIES", 3, 1, 100),
  // No "keep forever" value: records would then grow without bound. Ten years is the most, 1 day the least.
  // At least 15: longer than the queues' 14-day message time to live (infra/queues.json), so no
  // redelivered order message can reach an order whose record retention has deleted.
  retentionDays: int("RETENTION_DAYS", 30, 15, 3_650),
} as const;

export const AGENT_MODE_SETTING = "AGENT_MODE";
export const WORKFLOW_VERSION_SETTING = "WORKFLOW_VERSION";
export const ON_RECOVERIES_EXHAUSTED_SETTING = "ON_RECOVERIES_EXHAUSTED";

type IntegerValues = Record<keyof typeof INTEGER_SETTINGS, number>;

/** Reads and validates the pipeline settings; throws a SettingsError naming every bad setting. */
export function loadPipelineSettings(env: Environment): PipelineSettings {
  const problems: string[] = [];
  const values = readIntegerSettings(env, problems);
  const agentMode = readAgentMode(env, problems);
  const onExhausted = readOnRecoveriesExhausted(env, problems);
  // Every version's attempts and budgets must fit, not only the default's: older orders still run.
  if (!stepsFitInAttempt(values.stepTimeoutMs, MOST_STEPS, values.attemptTimeoutMs)) {
    problems.push(
      `STEP_TIMEOUT_MS (${values.stepTimeoutMs}) x ${MOST_STEPS} steps must fit in ATTEMPT_TIMEOUT_MS (${values.attemptTimeoutMs})`,
    );
  }
  const workflowVersion = readWorkflowVersion(env, problems);
  const partnerAccessKey = readPartnerAccessKey(env, problems);
  const breaker = readBreakerSettings(env, values.partnerCallTimeoutMs, problems);
  checkLeaseAndBackoffs(values, problems);
  const perStep = retryLayersPerStep(values, agentMode);
  // Forward: every step. Compensation: every undo, and the in-doubt step (at most one) resolved first.
  const undoRequests = MOST_STEPS + 1;
  const layers = checkRetryLayers(
    { ...perStep, partnerSteps: MOST_STEPS + undoRequests },
    values.retryBudgetPerOrder,
  );
  if (!layers.ok) problems.push(`RETRY_BUDGET_PER_ORDER: ${layers.error.message}`);
  if (problems.length > 0 || !breaker) throw new SettingsError(problems);

  return {
    breaker,
    attemptTimeoutMs: values.attemptTimeoutMs,
    stepTimeoutMs: values.stepTimeoutMs,
    agentCallsPerStep: values.agentCallsPerStep,
    retryBudgetPerOrder: values.retryBudgetPerOrder,
    undoReservePerOrder: worstCasePartnerCalls({ ...perStep, partnerSteps: undoRequests }),
    recovery: {
      maxRecoveries: values.maxRecoveries,
      backoff: { baseMs: values.recoveryBackoffBaseMs, capMs: values.recoveryBackoffCapMs },
      extendedBackoffAfter: values.extendedBackoffAfter,
      extendedDelayMs: values.extendedBackoffMs,
      onExhausted,
      maxHostInterruptions: values.maxHostInterruptions,
    },
    lateTimerMs: values.lateTimerMs,
    maxDeferralMs: values.maxDeferralMs,
    maxInFlight: values.maxInFlight,
    maxPending: values.maxPending,
    starterPageSize: values.starterPageSize,
    supervisorPageSize: values.supervisorPageSize,
    supervisorMaxPages: values.supervisorMaxPages,
    supervisorLeaseMs: values.supervisorLeaseMs,
    agentBackoff: { baseMs: values.agentBackoffBaseMs, capMs: values.agentBackoffCapMs },
    partnerCallTimeoutMs: values.partnerCallTimeoutMs,
    agentMode,
    agentRequestMaxDeliveries: values.agentRequestMaxDeliveries,
    retentionDays: values.retentionDays,
    workflowVersion,
    ...(partnerAccessKey !== undefined ? { partnerAccessKey } : {}),
  };
}

/** Each integer setting's value, its default where it is unset or out of range (a problem then). */
function readIntegerSettings(env: Environment, problems: string[]): IntegerValues {
  const read = (setting: IntegerSetting): number => {
    const raw = env[setting.name];
    if (raw === undefined || raw.trim() === "") return setting.defaultValue;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || value < setting.min || value > setting.max) {
      problems.push(
        `${setting.name}=${JSON.stringify(raw)}: must be an integer from ${setting.min} to ${setting.max}`,
      );
      return setting.defaultValue;
    }
    return value;
  };
  return Object.fromEntries(
    Object.entries(INTEGER_SETTINGS).map(([key, setting]) => [key, read(setting)]),
  ) as IntegerValues;
}

function readAgentMode(env: Environment, problems: string[]): PipelineSettings["agentMode"] {
  const mode = env[AGENT_MODE_SETTING] ?? "activity";
  if (mode !== "activity" && mode !== "queue") {
    problems.push(`${AGENT_MODE_SETTING}=${JSON.stringify(mode)}: must be activity or queue`);
  }
  return mode === "queue" ? "queue" : "activity";
}

function readOnRecoveriesExhausted(env: Environment, problems: string[]): RecoveryPolicy["onExhausted"] {
  const exhausted = env[ON_RECOVERIES_EXHAUSTED_SETTING] ?? "error";
  if (exhausted !== "error" && exhausted !== "compensate") {
    problems.push(
      `${ON_RECOVERIES_EXHAUSTED_SETTING}=${JSON.stringify(exhausted)}: must be error or compensate`,
    );
  }
  return exhausted === "compensate" ? "compensate" : "error";
}

function checkLeaseAndBackoffs(values: IntegerValues, problems: string[]): void {
  if (values.supervisorLeaseMs % 1_000 !== 0) {
    problems.push(
      `SUPERVISOR_LEASE_MS=${values.supervisorLeaseMs}: must be whole seconds, as blob leases are`,
    );
  }
  if (values.agentBackoffBaseMs > values.agentBackoffCapMs) {
    problems.push("AGENT_BACKOFF_BASE_MS must not exceed AGENT_BACKOFF_CAP_MS");
  }
  if (values.recoveryBackoffBaseMs > values.recoveryBackoffCapMs) {
    problems.push("RECOVERY_BACKOFF_BASE_MS must not exceed RECOVERY_BACKOFF_CAP_MS");
  }
}

/** The retry layers below one partner step request, for the budget check and the undo reserve. */
function retryLayersPerStep(values: IntegerValues, agentMode: PipelineSettings["agentMode"]): RetryLayers {
  return {
    partnerSteps: 1,
    attemptsPerOrder: values.maxRecoveries + 1, // forward attempts; compensation attempts have the same limit
    runtimeAttempts: 1, // no host-side activity retries
    deliveriesPerRequest: agentMode === "queue" ? values.agentRequestMaxDeliveries : 1,
    agentCallsPerRun: values.agentCallsPerStep,
    clientCallsPerCall: 1, // the Agent's HTTP client does not retry on its own
  };
}

function readWorkflowVersion(env: Environment, problems: string[]): number {
  const raw = env[WORKFLOW_VERSION_SETTING];
  if (raw === undefined || raw.trim() === "") return LATEST_WORKFLOW_VERSION;
  const version = Number(raw.trim());
  if (/^\d+$/.test(raw.trim()) && WORKFLOW_VERSIONS.includes(version)) return version;
  problems.push(
    `${WORKFLOW_VERSION_SETTING}=${JSON.stringify(raw)}: must be a workflow version this build runs (${WORKFLOW_VERSIONS.join(", ")})`,
  );
  return LATEST_WORKFLOW_VERSION;
}

/** The first characters of an App Service Key Vault reference, which the platform replaces by the secret. */
const KEY_VAULT_REFERENCE = "@Microsoft.KeyVault(";

/**
 * The partner's access key, or undefined when unset. The value never appears in a problem: it is a
 * secret. A reference still in place means App Service could not resolve it (the app's identity may
 * not read the secret, or the reference names none): calls would carry the reference as the key.
 */
function readPartnerAccessKey(env: Environment, problems: string[]): string | undefined {
  const raw = env[PARTNER_ACCESS_KEY_SETTING]?.trim();
  if (!raw) return undefined;
  if (raw.startsWith(KEY_VAULT_REFERENCE)) {
    problems.push(
      `${PARTNER_ACCESS_KEY_SETTING}: an unresolved Key Vault reference; check that the app's identity may read the secret it names`,
    );
    return undefined;
  }
  if (!/^[\x21-\x7e]{1,512}$/.test(raw)) {
    problems.push(
      `${PARTNER_ACCESS_KEY_SETTING}: must be 1 to 512 printable ASCII characters without spaces (it is sent as the x-partner-key header)`,
    );
    return undefined;
  }
  return raw;
}

/** Worst-case partner calls per granted call below the Scheduler, for the budget's run-time charge. */
export function agentAmplification(settings: PipelineSettings): number {
  return settings.agentMode === "queue" ? settings.agentRequestMaxDeliveries : 1;
}

function readBreakerSettings(
  env: Environment,
  partnerCallTimeoutMs: number,
  problems: string[],
): BreakerSettings | undefined {
  try {
    return loadBreakerSettings(env, { partnerCallTimeoutMs });
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    problems.push(...error.problems);
    return undefined;
  }
}
