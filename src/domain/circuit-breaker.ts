import { addToWindow, bucketStart, bucketTotals, type WindowBucket } from "./breaker-window.js";

/**
 * The circuit breaker of one partner operation, as a pure state machine: every function takes the state
 * and the time (ms since the epoch) and answers the next state, so every Agent instance can share one
 * state through a store (`ports/breaker-store.ts`, `breaker/shared-breaker.ts`) and tests can drive it
 * with any clock.
 *
 * - **closed**: calls go through. It keeps a rolling window of outcomes in `BREAKER_BUCKETS` time
 *   buckets, and opens when the partner looks down rather than flaky (F24-11): when the window holds at
 *   least `minCalls` calls of which at least `failureRate` failed, or when one reporter (an Agent
 *   instance, which knows the order of its own calls) saw `failureRun` transient failures in a row. A
 *   run counted across instances would not do: each writes its failures at once and its successes in
 *   batches, so the stored run would grow by the failures of a batch's interval whatever came between.
 *   The defaults (`config/breaker-settings.ts`) are chosen so that a partner failing a fifth of its
 *   calls at random opens it with a probability computed in `test/breaker/false-openings.test.ts`.
 * - **open**: no call is made until `nextProbeAt`; then the first caller becomes the probe. It keeps why
 *   it opened (`opening`) until it closes, for the operator's view.
 * - **half-open**: exactly one probe is out, under a lease; every other caller is told to wait until
 *   the lease ends. A probe that answers closes the breaker and clears its counts; a probe that fails
 *   opens it again for twice as long (up to `maxOpenMs`). A prober that never reports (it crashed) loses
 *   the probe when its lease expires, and the next caller probes instead.
 *
 * Only transient failures (5xx, 429, 408, timeouts, an unreachable partner) count: a permanent refusal
 * is an answer, so for the breaker it is as good as a success.
 */

/** What one partner call came to, as the breaker counts it. */
export type BreakerOutcome = "succeeded" | "transient" | "permanent";

export interface BreakerPolicy {
  /** Consecutive transient failures, as one reporter saw its own calls end, that open the breaker. */
  readonly failureRun: number;
  /** Share of failed calls in the window (0 < rate <= 1) that opens it, given `minCalls`. */
  readonly failureRate: number;
  /** Calls the window must hold before the rate is judged. */
  readonly minCalls: number;
  readonly windowMs: number;
  /** How long the breaker first stays open. */
  readonly openMs: number;
  /** The longest it stays open, however many probes failed. */
  readonly maxOpenMs: number;
  /** How long a probe is held before another caller may probe instead. */
  readonly probeLeaseMs: number;
}

export interface ClosedBreaker {
  readonly status: "closed";
  /** When it last closed; null if it never opened. */
  readonly closedAt: number | null;
  /** The run of transient failures of the reporter that wrote last (the shape is unchanged since v1). */
  readonly consecutiveFailures: number;
  readonly lastFailureAt: number | null;
  readonly window: readonly WindowBucket[];
}

export interface OpenBreaker {
  readonly status: "open";
  /** When it opened from closed (a failed probe keeps this). */
  readonly openedAt: number;
  /** Length of this open period; doubles with each failed probe, up to `maxOpenMs`. */
  readonly openMs: number;
  readonly nextProbeAt: number;
  /** Why it opened from closed (a failed probe keeps this); absent in a state stored before it was kept. */
  readonly opening?: BreakerOpening;
}

export interface BreakerProbe {
  readonly holder: string;
  readonly since: number;
  readonly leaseExpiresAt: number;
}

export interface HalfOpenBreaker {
  readonly status: "half-open";
  readonly openedAt: number;
  readonly openMs: number;
  readonly probe: BreakerProbe;
  readonly opening?: BreakerOpening;
}

export type BreakerState = ClosedBreaker | OpenBreaker | HalfOpenBreaker;
export type BreakerStatus = BreakerState["status"];

/** A breaker that has never seen a call. */
export const CLOSED_BREAKER: ClosedBreaker = {
  status: "closed",
  closedAt: null,
  consecutiveFailures: 0,
  lastFailureAt: null,
  window: [],
};

/** The gauge value of each state (the metric `sas.breaker.state`). */
export const BREAKER_STATE_VALUES: Readonly<Record<BreakerStatus, number>> = {
  closed: 0,
  "half-open": 1,
  open: 2,
};

/**
 * What a caller may do now. `call`: go ahead; `probe`: go ahead as the one probe (report the outcome
 * with the same holder); `defer`: make no call before `until`. `state` is the state to keep: the same
 * object when nothing changed, so a caller knows there is nothing to write.
 */
export type BreakerAdmission =
  | { readonly decision: "call"; readonly state: BreakerState }
  | { readonly decision: "probe"; readonly state: HalfOpenBreaker }
  | { readonly decision: "defer"; readonly until: number; readonly state: BreakerState };

export function admit(
  state: BreakerState,
  now: number,
  holder: string,
  policy: BreakerPolicy,
): BreakerAdmission {
  switch (state.status) {
    case "closed":
      return { decision: "call", state };
    case "open":
      if (now < state.nextProbeAt) return { decision: "defer", until: state.nextProbeAt, state };
      return { decision: "probe", state: probing(state, now, holder, policy) };
    case "half-open":
      if (state.probe.holder === holder) return { decision: "probe", state };
      if (now < state.probe.leaseExpiresAt) {
        return { decision: "defer", until: state.probe.leaseExpiresAt, state };
      }
      return { decision: "probe", state: probing(state, now, holder, policy) };
  }
}

function probing(
  state: OpenBreaker | HalfOpenBreaker,
  now: number,
  holder: string,
  policy: BreakerPolicy,
): HalfOpenBreaker {
  return {
    status: "half-open",
    openedAt: state.openedAt,
    openMs: state.openMs,
    probe: { holder, since: now, leaseExpiresAt: now + policy.probeLeaseMs },
    ...(state.opening ? { opening: state.opening } : {}),
  };
}

/**
 * The state after a call by `holder` ended in `outcome`. While it is open, or half-open for another
 * holder's probe, a call that was under way before it opened changes nothing. `run` is the reporter's
 * own run of transient failures, this call included (0 after an answer); by default the stored run
 * goes on, as if every call were reported by one reporter.
 */
export function record(
  state: BreakerState,
  outcome: BreakerOutcome,
  now: number,
  holder: string,
  policy: BreakerPolicy,
  run?: number,
): BreakerState {
  switch (state.status) {
    case "closed": {
      const failed = outcome === "transient";
      const reported = run ?? (failed ? state.consecutiveFailures + 1 : 0);
      return recordCalls(state, oneCall(failed, now, reported, policy), now, policy);
    }
    case "open":
      return state;
    case "half-open":
      if (state.probe.holder !== holder) return state;
      if (outcome !== "transient") return { ...CLOSED_BREAKER, closedAt: now };
      return reopened(state, now, policy);
  }
}

function oneCall(failed: boolean, at: number, run: number, policy: BreakerPolicy): CallCounts {
  return {
    buckets: [{ start: bucketStart(at, policy), calls: 1, failures: failed ? 1 : 0 }],
    lastFailureAt: failed ? at : null,
    run,
  };
}

/**
 * Calls one reporter counted and reports together (a batch, or one call): how many ended in each bucket
 * and how many of those failed transiently, when its last failure ended, and its own run of transient
 * failures after the last of them.
 */
export interface CallCounts {
  readonly buckets: readonly WindowBucket[];
  readonly lastFailureAt: number | null;
  readonly run: number;
}

/**
 * Adds a reporter's calls to a closed breaker's window and takes its run as the breaker's; calls with a
 * failure among them open it when a threshold is reached, and the open breaker keeps which and the
 * counts then (`opening`). Calls that ended before a breaker opened say nothing once it has: an open or
 * half-open breaker is answered unchanged.
 */
export function recordCalls(
  state: BreakerState,
  counts: CallCounts,
  now: number,
  policy: BreakerPolicy,
): BreakerState {
  if (state.status !== "closed") return state;
  const next = withCalls(state, counts, now, policy);
  const opening = hasFailures(counts) ? openingAfter(next, now, policy) : undefined;
  if (opening === undefined) return next;
  return { status: "open", openedAt: now, openMs: policy.openMs, nextProbeAt: now + policy.openMs, opening };
}

function withCalls(
  state: ClosedBreaker,
  counts: CallCounts,
  now: number,
  policy: BreakerPolicy,
): ClosedBreaker {
  let window = state.window;
  for (const bucket of counts.buckets) {
    if (bucket.calls > 0)
      window = addToWindow(window, bucket.start, bucket.calls, bucket.failures, now, policy);
  }
  const lastFailureAt =
    counts.lastFailureAt === null || state.lastFailureAt === null
      ? (counts.lastFailureAt ?? state.lastFailureAt)
      : Math.max(counts.lastFailureAt, state.lastFailureAt);
  return { ...state, window, consecutiveFailures: counts.run, lastFailureAt };
}

function hasFailures(counts: CallCounts): boolean {
  return counts.buckets.some((bucket) => bucket.failures > 0);
}

function reopened(state: HalfOpenBreaker, now: number, policy: BreakerPolicy): OpenBreaker {
  const openMs = Math.min(Math.max(state.openMs * 2, policy.openMs), policy.maxOpenMs);
  const { openedAt, opening } = state;
  return { status: "open", openedAt, openMs, nextProbeAt: now + openMs, ...(opening ? { opening } : {}) };
}

/** Which threshold a closed breaker's counts have reached: the run first, then the rate; null for neither. */
function openCause(state: ClosedBreaker, now: number, policy: BreakerPolicy): BreakerOpening["cause"] | null {
  if (state.consecutiveFailures >= policy.failureRun) return "run";
  const { calls, failures } = windowTotals(state, now, policy);
  return calls >= policy.minCalls && failures >= policy.failureRate * calls ? "rate" : null;
}

/** Why a closed breaker opened, counted with the calls that opened it (the operator's alert and view). */
export interface BreakerOpening {
  /**
   * `run`: one reporter's consecutive transient failures reached `failureRun`; `rate`: the window's share
   * of failures reached `failureRate`.
   */
  readonly cause: "run" | "rate";
  readonly consecutiveFailures: number;
  readonly windowCalls: number;
  readonly windowFailures: number;
  readonly windowMs: number;
}

/**
 * Why `before` opens when `counts` are recorded at `now`, as `recordCalls` decides it; undefined when it
 * would not open (it is not closed, the counts hold no failure, or no threshold is reached).
 */
export function openingOf(
  before: BreakerState,
  counts: CallCounts,
  now: number,
  policy: BreakerPolicy,
): BreakerOpening | undefined {
  const after = recordCalls(before, counts, now, policy);
  return before.status === "closed" && after.status === "open" ? after.opening : undefined;
}

/** Why a closed breaker with these counts opens, and the counts; undefined when no threshold is reached. */
function openingAfter(state: ClosedBreaker, now: number, policy: BreakerPolicy): BreakerOpening | undefined {
  const cause = openCause(state, now, policy);
  if (cause === null) return undefined;
  const { calls, failures } = windowTotals(state, now, policy);
  return {
    cause,
    consecutiveFailures: state.consecutiveFailures,
    windowCalls: calls,
    windowFailures: failures,
    windowMs: policy.windowMs,
  };
}

/** Calls and failures the window holds at `now` (none unless closed). */
export function windowTotals(
  state: BreakerState,
  now: number,
  policy: BreakerPolicy,
): { readonly calls: number; readonly failures: number } {
  return state.status === "closed" ? bucketTotals(state.window, now, policy) : { calls: 0, failures: 0 };
}

/**
 * What a change of state means for the people watching: `opened` (it was closed), `reopened` (a probe
 * failed), `half-opened` (a probe went out), `closed` (a probe answered). Null when the status is the
 * same (a new prober after a lost lease is no transition). Alerts are for `opened` and `closed`.
 */
export type BreakerTransition = "opened" | "reopened" | "half-opened" | "closed";

export function transitionOf(
  previous: BreakerState | undefined,
  next: BreakerState,
): BreakerTransition | null {
  const before = previous?.status ?? "closed";
  if (before === next.status) return null;
  if (next.status === "closed") return "closed";
  if (next.status === "half-open") return "half-opened";
  return before === "closed" ? "opened" : "reopened";
}
