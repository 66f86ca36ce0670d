/**
 * The simulated partner's access key and control API as plain data: what a client of the partner needs
 * to know, with no code behind it. The partner's own code builds on it; a client in another application
 * may import it or keep a copy of these few types (the key's header is the app's port's, re-exported).
 */

/**
 * The header that carries the partner's access key; every request but `GET /health` needs it once a key
 * is set. Defined once, in the port src/ calls the partner through: src/ may not import the partner's code.
 */
export { PARTNER_KEY_HEADER } from "../src/ports/partner-controls.js";

/** How many of the latest control changes `GET /control` lists. */
export const CONTROL_CHANGES_LISTED = 50;

/** The longest outage `POST /control/outage` accepts, in seconds (one day). */
export const OUTAGE_MAX_SECONDS = 86_400;

/** The four fault rates, each from 0 to 1, adding up to at most 1. */
export interface FaultRates {
  readonly transient: number;
  readonly permanent: number;
  readonly slow: number;
  readonly lostReply: number;
}

/** A running outage: the partner refuses every call from `since` until `until` (ISO times). */
export interface PartnerOutage {
  readonly since: string;
  readonly until: string;
}

/** One change made to the partner's faults or availability, as its books keep it. */
export interface ControlChange {
  readonly at: string;
  readonly change: "faults" | "outage" | "recovered";
  /** `settings`: the rates the partner was started with differ from the last ones in its books. */
  readonly by: "operator" | "settings";
  /** The new rates, for a `faults` change. */
  readonly faults?: FaultRates;
  /** The end of the outage, for an `outage` change. */
  readonly until?: string;
}

/** What `GET /control` (and every control change) answers. */
export interface PartnerControlState {
  readonly faults: FaultRates;
  readonly outage: PartnerOutage | null;
  readonly seed: number;
  readonly slowMs: number;
  /** The latest changes, oldest first, at most `CONTROL_CHANGES_LISTED`. */
  readonly changes: readonly ControlChange[];
}
