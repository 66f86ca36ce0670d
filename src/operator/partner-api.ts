/**
 * The operator API of the partner's controls, shared by the Functions HTTP triggers and the embedded
 * host's server. It passes the partner's own answers on; the partner validates and journals.
 *
 *   GET    /api/partner          (function key)  200 the partner's control state: { "faults", "outage",
 *                                                "seed", "slowMs", "changes" }
 *   POST   /api/partner/faults   (admin key)     body: any of { "transient", "permanent", "slow",
 *                                                "lostReply" }, rates merged over the current ones.
 *                                                200 the new state; 400 the partner's refusal naming the rate
 *   POST   /api/partner/outage   (admin key)     body: { "seconds": 1 to 86400 }: the partner refuses
 *                                                every operation until then. 200 the new state; 400
 *   DELETE /api/partner/outage   (admin key)     ends a running outage. 200 the new state
 *
 *   Every route: 404 { "error": "no-partner-controls", "message" } when the partner has no control API
 *   (a real partner); 502 { "error": "partner-unreachable" | "partner-refused-key" | "partner-failed",
 *   "message" } when it did not answer, refused the access key, or answered something else.
 *   400 { "error": "invalid-faults" | "invalid-outage", "message" } for a body that is not a JSON
 *   object (or an outage without a number of seconds); 413 past 4 KiB.
 */

import { jsonObjectOf } from "../domain/validation.js";
import type { Logger } from "../ports/logger.js";
import type { PartnerControls, PartnerControlsResult } from "../ports/partner-controls.js";
import type { ApiAnswer } from "./orders-api.js";

export const PARTNER_ROUTE = "partner";
export const PARTNER_FAULTS_ROUTE = `${PARTNER_ROUTE}/faults`;
export const PARTNER_OUTAGE_ROUTE = `${PARTNER_ROUTE}/outage`;
export const PARTNER_PATH = `/api/${PARTNER_ROUTE}`;
export const PARTNER_FAULTS_PATH = `/api/${PARTNER_FAULTS_ROUTE}`;
export const PARTNER_OUTAGE_PATH = `/api/${PARTNER_OUTAGE_ROUTE}`;

export interface PartnerApi {
  status(): Promise<ApiAnswer>;
  /** `text` is the request body, at most MAX_OPERATOR_BODY_BYTES long. */
  setFaults(text: string): Promise<ApiAnswer>;
  startOutage(text: string): Promise<ApiAnswer>;
  endOutage(): Promise<ApiAnswer>;
}

export function createPartnerApi(deps: { controls: PartnerControls; logger: Logger }): PartnerApi {
  const { controls, logger } = deps;
  const answer = async (
    operation: string,
    call: () => Promise<PartnerControlsResult>,
    change: boolean,
  ): Promise<ApiAnswer> => {
    const result = await call();
    if (result.kind === "refused") {
      logger.warn("partner.controls.refused", { operation, reason: result.reason, message: result.message });
      const status = result.reason === "no-partner-controls" ? 404 : 502;
      return { status, body: { error: result.reason, message: result.message } };
    }
    if (change && result.status === 200) {
      const { faults, outage } = result.body;
      logger.info("partner.controls.changed", { operation, faults, outage });
    }
    return { status: result.status, body: result.body };
  };
  return {
    status: () => answer("status", () => controls.status(), false),
    async setFaults(text) {
      const body = jsonObjectOf(text);
      if (!body)
        return invalid("invalid-faults", 'the body must be a JSON object of rates, e.g. {"transient": 0.5}');
      return answer("setFaults", () => controls.setFaults(body), true);
    },
    async startOutage(text) {
      const seconds = jsonObjectOf(text)?.seconds;
      if (typeof seconds !== "number") {
        return invalid("invalid-outage", 'the body must be {"seconds": <whole seconds, 1 to 86400>}');
      }
      return answer("startOutage", () => controls.startOutage(seconds), true);
    },
    endOutage: () => answer("endOutage", () => controls.endOutage(), true),
  };
}

function invalid(error: string, message: string): ApiAnswer {
  return { status: 400, body: { error, message } };
}
