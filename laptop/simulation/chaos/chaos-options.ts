import type { PartnerFaults } from "../../../partner/faults.js";

/** What a chaos run and a soak share. */
export interface RunOptions {
  /** Orders POSTed per second, on a fixed schedule. */
  readonly rate: number;
  readonly agent: "activity" | "queue";
  readonly faults: PartnerFaults;
  readonly duplicateReplies: number;
  readonly seed: number;
  /** How long, after the last order is accepted, every order may take to settle. */
  readonly drainSeconds: number;
  readonly json: boolean;
  /** Where the host's database and the partner's ledger go; default a temporary directory, removed after a pass. */
  readonly data?: string;
}

export interface ChaosOptions extends RunOptions {
  readonly orders: number;
  /** Times the host is killed with SIGKILL and started again on the same data. */
  readonly kills: number;
  /** Times the partner is killed and kept down for `outageSeconds`, then started on the same ledger. */
  readonly partnerOutages: number;
  readonly outageSeconds: number;
  /**
   * Start the host with workflow version 1 and, from the first kill on, with the default: a deployment
   * of a new workflow version under orders in flight.
   */
  readonly upgrade: boolean;
}
