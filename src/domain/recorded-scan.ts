import { z } from "zod";
import { isoInstantSchema } from "./time.js";
import { text, validate } from "./validation.js";

const count = z.number().int().min(0);

/**
 * One Supervisor scan as the scan journal keeps it: who ran it and when, what it found (the fields of
 * its report) and what it cost. Written by one worker and read by another, so it is validated on read.
 */
export const recordedScanSchema = z.strictObject({
  /** The lease holder that ran the scan. */
  holder: text(1, 1_024),
  startedAt: isoInstantSchema,
  finishedAt: isoInstantSchema,
  found: z.strictObject({
    scanned: count,
    resets: count,
    toError: count,
    toCompensation: count,
    stalled: count,
    lostRaces: count,
    truncated: z.boolean(),
    leaseLost: z.boolean(),
  }),
  cost: z.strictObject({
    requestUnits: z.number().min(0),
    durationMs: z.number().min(0),
    pages: count,
  }),
});
export type RecordedScan = z.infer<typeof recordedScanSchema>;

/** `input` as a recorded scan; throws a ValidationError naming every field that is not. */
export function checkedRecordedScan(input: unknown): RecordedScan {
  const parsed = validate("recorded scan", recordedScanSchema, input);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}
