import { z } from "zod";

/**
 * Instants are ISO-8601 UTC strings with millisecond precision ("2026-01-02T03:04:05.678Z"), the form
 * `Date.prototype.toISOString` produces. One fixed form keeps lexicographic order equal to time order,
 * so every store can compare and index them as plain strings.
 */
export type IsoInstant = string;

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const INSTANT_RULE = "must be an ISO-8601 UTC instant like 2026-01-02T03:04:05.678Z";

/** The form alone would let through times that do not exist (month 13, 30 February, 24:00). */
function exists(text: string): boolean {
  const time = Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString() === text;
}

export const isoInstantSchema = z
  .string()
  .regex(ISO_INSTANT, { error: INSTANT_RULE })
  .refine((text) => !ISO_INSTANT.test(text) || exists(text), {
    error: `${INSTANT_RULE}, of a time that exists`,
  });

export function toInstant(date: Date): IsoInstant {
  return date.toISOString();
}

export function addMilliseconds(instant: IsoInstant, ms: number): IsoInstant {
  return new Date(Date.parse(instant) + ms).toISOString();
}

export function millisecondsBetween(from: IsoInstant, to: IsoInstant): number {
  return Date.parse(to) - Date.parse(from);
}
