import {
  CONTROL_CHANGES_LISTED,
  type ControlChange,
  type FaultRates,
  type PartnerOutage,
} from "./control-contract.js";

/** The control books as plain data, for a snapshot of the ledger. */
export interface ControlBooksState {
  readonly recent: readonly ControlChange[];
  readonly rates: FaultRates | null;
  readonly window: PartnerOutage | null;
}

/**
 * The control changes in the partner's books: the latest ones, the last fault rates journaled and the
 * last outage. Built from the changes alone (never from the clock), so replaying them after a restart
 * gives the same answer; whether the outage is still running is asked with the time of the question.
 */
export class ControlBooks {
  private readonly recent: ControlChange[] = [];
  private rates: FaultRates | null = null;
  private window: PartnerOutage | null = null;

  apply(change: ControlChange): void {
    if (change.change === "faults" && change.faults) this.rates = { ...change.faults };
    if (change.change === "outage" && change.until) {
      // A new end for an outage still running keeps its start.
      const running = this.window !== null && Date.parse(this.window.until) > Date.parse(change.at);
      this.window = { since: running && this.window ? this.window.since : change.at, until: change.until };
    }
    if (change.change === "recovered") this.window = null;
    this.recent.push(change);
    if (this.recent.length > CONTROL_CHANGES_LISTED) this.recent.shift();
  }

  /** The rates of the last `faults` change, or null when none was journaled. */
  lastFaults(): FaultRates | null {
    return this.rates ? { ...this.rates } : null;
  }

  /** The outage in force at `now`, or null: an outage whose end has passed is over by itself. */
  outageAt(now: Date): PartnerOutage | null {
    return this.window && Date.parse(this.window.until) > now.getTime() ? { ...this.window } : null;
  }

  /** The latest changes, oldest first. */
  changes(): ControlChange[] {
    return this.recent.map((change) => ({ ...change }));
  }

  reset(): void {
    this.recent.length = 0;
    this.rates = null;
    this.window = null;
  }

  state(): ControlBooksState {
    return {
      recent: this.changes(),
      rates: this.lastFaults(),
      window: this.window ? { ...this.window } : null,
    };
  }

  /** Takes `state` in place of what these books held. */
  load(state: ControlBooksState): void {
    this.recent.length = 0;
    for (const change of state.recent.slice(-CONTROL_CHANGES_LISTED)) this.recent.push({ ...change });
    this.rates = state.rates ? { ...state.rates } : null;
    this.window = state.window ? { ...state.window } : null;
  }
}
