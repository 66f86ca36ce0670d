import fc from "fast-check";

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Whether `text` is an instant in the contracts' one form, `Date.prototype.toISOString`'s: the
 * pattern, and a real point in time that prints back as the same text (no month 13, no 30 February).
 */
export function isInstant(text: string): boolean {
  if (!ISO_INSTANT.test(text)) return false;
  const time = Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString() === text;
}

/** Texts that are not such an instant: other forms of a time, times that do not exist, no time at all. */
export const notAnInstant: fc.Arbitrary<string> = fc
  .oneof(
    fc.constantFrom(
      "",
      "tomorrow",
      "2026-01-01",
      "2026-01-01T00:00:00Z",
      "2026-01-01T00:00:00.000+01:00",
      "2026-01-01 00:00:00.000Z",
      "2026-13-01T00:00:00.000Z",
      "2026-02-30T00:00:00.000Z",
      "2026-01-01T24:00:00.000Z",
      "2026-01-01T23:60:00.000Z",
      "2026-00-10T00:00:00.000Z",
      "0000-00-00T00:00:00.000Z",
    ),
    fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
      )
      .map(
        ([y, m, d]) => `${String(y).padStart(4, "0")}-${pad(m)}-${pad(d)}T${pad(d % 30)}:${pad(m)}:00.000Z`,
      ),
    fc.string({ maxLength: 30 }),
  )
  .filter((text) => !isInstant(text));

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
