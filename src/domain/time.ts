import { z } from "zod";

/**
 * Instants are ISO-8601 UTC strings with millisecond precision ("2026-01-02T03:04:05.678Z"), the form
 * `Date.prototype.toISOString` produces. One fixed form keeps lexicographic order equal to time order,
 * so every store can compare and index them as plain strings.
 */
export type IsoInstant = string;

export const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const INSTANT_RULE = "must be an ISO-8601 UTC instant like 2026-01-02T03:04:05.678Z";

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The form alone would let through times that do not exist (month 13, 30 February, 24:00). Checked by
 * arithmetic on the digits, for a text already of the form: every record read and written carries
 * dozens of instants, and building a Date for each showed in profiles.
 */
export function instantExists(text: string): boolean {
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  return (
    day <= days && digitsAt(text, 11, 13) < 24 && digitsAt(text, 14, 16) < 60 && digitsAt(text, 17, 19) < 60
  );
}

/** The number the digits of `text` from `from` to `to` spell, by arithmetic: slicing and `Number` cost several times more. */
function digitsAt(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) value = value * 10 + text.charCodeAt(i) - 48;
  return value;
}

export const isoInstantSchema = z
  .string()
  .regex(ISO_INSTANT, { error: INSTANT_RULE })
  .refine((text) => !ISO_INSTANT.test(text) || instantExists(text), {
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

/**
 * An ISO 8601 duration of days, hours, minutes and seconds (`P1D`, `PT1M`, `PT30S`: what Service Bus
 * takes for its queue properties) in milliseconds.
 */
export function isoDurationMs(duration: string): number {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(duration);
  if (!match || duration === "P" || duration.endsWith("T"))
    throw new RangeError(`${duration} is not a duration of days, hours, minutes and seconds`);
  const [, days = "0", hours = "0", minutes = "0", seconds = "0"] = match;
  return ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1_000;
}
