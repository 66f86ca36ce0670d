import { z } from "zod";
import type { BreakerState } from "./circuit-breaker.js";
import { validate } from "./validation.js";

const instant = z.number().int().min(0);
const count = z.number().int().min(0);

/** Why it opened; absent from a state stored before openings were kept, which reads as it was. */
const opening = z
  .strictObject({
    cause: z.enum(["run", "rate"]),
    consecutiveFailures: count,
    windowCalls: count,
    windowFailures: count,
    windowMs: count,
  })
  .exactOptional();

/** The state as a store keeps it (JSON); validated on read, as another instance wrote it. */
export const breakerStateSchema: z.ZodType<BreakerState> = z.discriminatedUnion("status", [
  z.strictObject({
    status: z.literal("closed"),
    closedAt: instant.nullable(),
    consecutiveFailures: count,
    lastFailureAt: instant.nullable(),
    window: z.array(z.strictObject({ start: instant, calls: count, failures: count })).max(64),
  }),
  z.strictObject({
    status: z.literal("open"),
    openedAt: instant,
    openMs: count,
    nextProbeAt: instant,
    opening,
  }),
  z.strictObject({
    status: z.literal("half-open"),
    openedAt: instant,
    openMs: count,
    probe: z.strictObject({ holder: z.string().min(1).max(256), since: instant, leaseExpiresAt: instant }),
    opening,
  }),
]);

/** `input` as a breaker state; throws a ValidationError naming `subject` and every field that is not. */
export function checkedBreakerState(input: unknown, subject = "circuit breaker state"): BreakerState {
  const parsed = validate(subject, breakerStateSchema, input);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}
