/** What one target did with the inputs it was given. */
export interface TallyCounts {
  /** Inputs sent (messages, requests, activity inputs), counted until the first violation. */
  readonly cases: number;
  readonly accepted: number;
  /** Answered with a 4xx, or thrown back by an activity. */
  readonly refused: number;
  readonly deadLettered: number;
  /** Settled without effect: duplicates, and Agent replies for no waiting instance. */
  readonly dropped: number;
}

export type Outcome = "accepted" | "refused" | "deadLettered" | "dropped";

const FIELD: Record<Outcome, keyof TallyCounts> = {
  accepted: "accepted",
  refused: "refused",
  deadLettered: "deadLettered",
  dropped: "dropped",
};

/**
 * Counts per target. Frozen at the first violation, so that fast-check's shrinking, which replays
 * smaller inputs, does not inflate the figures of the run that was reported.
 */
export class Tally {
  private counts = { cases: 0, accepted: 0, refused: 0, deadLettered: 0, dropped: 0 };
  private frozen = false;

  /** One input was sent and ended as `outcome`. */
  record(outcome: Outcome): void {
    if (this.frozen) return;
    this.counts.cases++;
    this.counts[FIELD[outcome]]++;
  }

  freeze(): void {
    this.frozen = true;
  }

  snapshot(): TallyCounts {
    return { ...this.counts };
  }
}
