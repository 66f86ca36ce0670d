import { addMilliseconds, type IsoInstant, millisecondsBetween } from "./time.js";

// Every deadline rule of an order's attempt, in one place: a step's, a chain's, a compensation's, an
// attempt's, and the longest deferral. The orchestrations, the activities, the transitions, the
// Supervisor and the settings ask here; none computes a deadline itself (docs/architecture.md, "Change
// a deadline"). Pure: each caller hands in its own `now` (an orchestration its replayed time).

/** A step's deadline: the step timeout after the step starts. */
export function stepDeadline(startedAt: IsoInstant, stepTimeoutMs: number): IsoInstant {
  return addMilliseconds(startedAt, stepTimeoutMs);
}

/**
 * A compensation's deadline, the one every undo is answered by: a step timeout for each completed
 * step, and one more for the step whose failure started it (an in-doubt step is resolved first).
 */
export function compensationDeadline(
  beganAt: IsoInstant,
  stepTimeoutMs: number,
  completedSteps: number,
): IsoInstant {
  return addMilliseconds(beganAt, stepTimeoutMs * (completedSteps + 1));
}

/** An attempt's deadline from its claim: the attempt timeout. */
export function attemptDeadline(claimedAt: IsoInstant, attemptTimeoutMs: number): IsoInstant {
  return addMilliseconds(claimedAt, attemptTimeoutMs);
}

/** The deadline a held-up attempt (its orchestration still running past it) is given again. */
export function extendedDeadline(now: IsoInstant, extensionMs: number): IsoInstant {
  return addMilliseconds(now, extensionMs);
}

/** Whether the steps of the longest workflow, each a whole step timeout, fit inside an attempt's. */
export function stepsFitInAttempt(stepTimeoutMs: number, steps: number, attemptTimeoutMs: number): boolean {
  return stepTimeoutMs * steps <= attemptTimeoutMs;
}

/** Whether `deadline` has passed at `now` (reached counts); no deadline never passes. */
export function hasPassed(deadline: IsoInstant | null, now: IsoInstant): boolean {
  return deadline !== null && deadline <= now;
}

/** How long past `deadline` `now` is; negative before it. */
export function millisecondsPast(deadline: IsoInstant, now: IsoInstant): number {
  return millisecondsBetween(deadline, now);
}

/** How late after `deadline` a timer was seen to fire at `now`: never negative. */
export function lateBy(deadline: IsoInstant, now: IsoInstant): number {
  return Math.max(0, millisecondsPast(deadline, now));
}

/**
 * How long before the step's deadline a reply must come for the Agent's activity to record it (a
 * quarter of the step timeout if that is shorter). Later than that, the update could land, or its
 * result reach the orchestration, after the step's timer: the orchestration records it itself if its
 * timer has not won (`advance`), as versions 1 and 2 do.
 */
export const RECORD_MARGIN_MS = 1_000;

/** Whether a reply at `now` leaves the Agent's activity time to record its step before `deadline`. */
export function leavesRoomToRecord(deadline: IsoInstant, now: IsoInstant, stepTimeoutMs: number): boolean {
  const margin = Math.min(RECORD_MARGIN_MS, stepTimeoutMs / 4);
  return Date.parse(now) + margin < Date.parse(deadline);
}

/**
 * The least of the step timeout that must be left before a chain's deadline for the Agent's activity to
 * start the next step under it (workflows that chain steps); with less, the next step gets a deadline
 * of its own.
 */
export const CHAIN_MIN_REMAINING_SHARE = 0.5;

/** Whether `chainUntil` leaves at least `CHAIN_MIN_REMAINING_SHARE` of a step timeout after `now`. */
export function leavesRoomToChain(chainUntil: IsoInstant, now: IsoInstant, stepTimeoutMs: number): boolean {
  return millisecondsBetween(now, chainUntil) >= stepTimeoutMs * CHAIN_MIN_REMAINING_SHARE;
}

/**
 * The deadline of the step after one that completed at `now`: the chain's while it leaves room
 * (`chainUntil` given), else a step timeout of its own.
 */
export function nextStepDeadline(
  now: IsoInstant,
  stepTimeoutMs: number,
  chainUntil?: IsoInstant,
): IsoInstant {
  if (chainUntil !== undefined && leavesRoomToChain(chainUntil, now, stepTimeoutMs)) return chainUntil;
  return stepDeadline(now, stepTimeoutMs);
}

/** Whether a run of deferrals begun at `deferredSince` and lasting until `until` is past the longest allowed. */
export function pastLongestDeferral(
  deferredSince: IsoInstant,
  until: IsoInstant,
  maxDeferralMs: number,
): boolean {
  return millisecondsBetween(deferredSince, until) > maxDeferralMs;
}
