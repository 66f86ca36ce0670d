/** The query string of `GET /api/orders` read into a list request, or the 400 answer naming what is wrong. */
import { isProcessState, PROCESS_STATES } from "../domain/state-record.js";
import type { RecentQuery } from "../ports/state-read-model.js";
import type { ApiAnswer } from "./api-answer.js";

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 200;

/** The list request the query string asks for, or the 400 answer naming what is wrong with it. */
export function listQuery(params: URLSearchParams): RecentQuery | ApiAnswer {
  const unknown = [...params.keys()].find((key) => !["state", "limit", "continuation"].includes(key));
  if (unknown !== undefined) return invalidList(unknown, "unknown", "is not a parameter of this list");
  const stateText = params.get("state");
  const state = stateText === null || isProcessState(stateText) ? stateText : undefined;
  if (state === undefined)
    return invalidList("state", "oneOf", `must be one of ${PROCESS_STATES.join(", ")}`);
  const limitText = params.get("limit") ?? String(DEFAULT_LIST_LIMIT);
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_LIST_LIMIT) {
    return invalidList("limit", "range", `must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  }
  return {
    state,
    maxItems: limit,
    continuationToken: params.get("continuation"),
  };
}

export function invalidList(field: string, rule: string, message: string): ApiAnswer {
  return { status: 400, body: { error: "invalid list request", issues: [{ field, rule, message }] } };
}
