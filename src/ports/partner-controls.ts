/**
 * The partner's controls, as the operator API reads and changes them: its fault rates and its outages.
 * Only the simulated partner has them (`GET /control`, `POST /control/faults`, `POST /control/outage`,
 * `DELETE /control/outage`); a real partner answers 404, which is a refusal here, not a failure.
 */

/**
 * The header that carries the partner's access key, on the Agents' calls and on the controls'. The
 * partner checks it under this one name: partner/control-contract.ts re-exports it.
 */
export const PARTNER_KEY_HEADER = "x-partner-key";

/** Why the partner's answer could not be had or used. */
export type PartnerControlsRefusal =
  /** The partner answered 404: it has no control API (a real partner). */
  | "no-partner-controls"
  /** No answer: the connection was refused or dropped, or nothing came back in time. */
  | "partner-unreachable"
  /** 401 or 403: the partner wants an access key, or another one (PARTNER_ACCESS_KEY). */
  | "partner-refused-key"
  /** An answer that is not the control API's: a 5xx, or a body that is not a JSON object. */
  | "partner-failed";

export type PartnerControlsResult =
  /** The partner's own answer: 200 with its control state, or 400 naming what it refused. */
  | { readonly kind: "answer"; readonly status: number; readonly body: Readonly<Record<string, unknown>> }
  | { readonly kind: "refused"; readonly reason: PartnerControlsRefusal; readonly message: string };

export interface PartnerControls {
  /** The control state: fault rates, the outage if one runs, the last changes. */
  status(): Promise<PartnerControlsResult>;
  /** Merges the rates given over the partner's current ones; the partner validates the whole. */
  setFaults(faults: Readonly<Record<string, unknown>>): Promise<PartnerControlsResult>;
  /** The partner refuses every operation for `seconds` from now (replacing the end of a running outage). */
  startOutage(seconds: number): Promise<PartnerControlsResult>;
  /** Ends a running outage now. */
  endOutage(): Promise<PartnerControlsResult>;
}
