import { z } from "zod";

/**
 * Instants are ISO-8601 UTC strings with millisecond precision ("2026-01-02T03:04:05.678Z"), the form
 * `Date.prototype.toISOString` produces. One fixed form keeps lexicographic order equal to time order,
 * so every store can compare and index them as plain strings.
 */
export type IsoInstant = string;

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const isoInstantSchema = z
  .string()
  .regex(ISO_INSTANT, { error: "must be an ISO-8601 UTC instant like 2026-01-02T03:04:05.678Z" });

export function toInstant(date: Date): IsoInstant {
  return date.toISOString();
}

export function addMilliseconds(instant: IsoInstant, ms: number): IsoInstant {
  return new Date(Date.parse(instant) + ms).toISOString();
}

export function millisecondsBetween(from: IsoInstant, to: IsoInstant): number {
  return Date.parse(to) - Date.parse(from);
}
