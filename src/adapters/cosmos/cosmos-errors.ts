/** The HTTP status of a Cosmos DB SDK error (409, 412, ...), or undefined for any other error. */
export function statusOf(error: unknown): unknown {
  return typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
}

/** What a failed request was charged: a precondition that failed still costs request units. */
export function chargeOf(error: unknown): number {
  if (typeof error !== "object" || error === null) return 0;
  if ("requestCharge" in error && typeof error.requestCharge === "number") return error.requestCharge;
  const headers = "headers" in error ? (error.headers as Record<string, unknown> | undefined) : undefined;
  const charge = Number(headers?.["x-ms-request-charge"]);
  return Number.isFinite(charge) ? charge : 0;
}
