/**
 * The six-field NCRONTAB expressions a timer trigger takes (`second minute hour day month day-of-week`),
 * checked field by field so a schedule the host would refuse at load is refused at start-up with the
 * field and the reason: `*`, a value, a range `a-b`, a step `*\/n`, `a-b/n` or `a/n`, and lists of those;
 * months and days of the week also by their English names, whole or in three letters.
 */

interface FieldRule {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const MONTHS = [
  "JANUARY",
  "FEBRUARY",
  "MARCH",
  "APRIL",
  "MAY",
  "JUNE",
  "JULY",
  "AUGUST",
  "SEPTEMBER",
  "OCTOBER",
  "NOVEMBER",
  "DECEMBER",
];
const DAYS = ["SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"];

const FIELDS: readonly FieldRule[] = [
  { name: "second", min: 0, max: 59 },
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS },
  { name: "day of week", min: 0, max: 6, names: DAYS },
];

/** Why `expression` is not a six-field NCRONTAB expression, or null when it is one. */
export function ncrontabProblem(expression: string): string | null {
  const fields = expression
    .trim()
    .split(/\s+/)
    .filter((field) => field !== "");
  if (fields.length !== 6) return `has ${fields.length} fields; it needs six, seconds first`;
  for (const [index, rule] of FIELDS.entries()) {
    const field = fields[index] ?? "";
    for (const part of field.split(",")) {
      const problem = partProblem(part, rule);
      if (problem) return `${rule.name} field ${JSON.stringify(field)}: ${problem}`;
    }
  }
  return null;
}

function partProblem(part: string, rule: FieldRule): string | null {
  const [range = "", step, extra] = part.split("/");
  if (extra !== undefined) return `${JSON.stringify(part)} has more than one step`;
  if (step !== undefined && !(/^\d+$/.test(step) && Number(step) >= 1)) {
    return `the step in ${JSON.stringify(part)} must be a whole number from 1`;
  }
  if (range === "*") return null;
  const ends = range.split("-");
  if (ends.length > 2) return `${JSON.stringify(part)} is not a value or a range`;
  const values: number[] = [];
  for (const end of ends) {
    const value = fieldValue(end, rule);
    if (value === undefined) return `${JSON.stringify(end)} is not a number${rule.names ? " or a name" : ""}`;
    if (value < rule.min || value > rule.max) return `${end} is outside ${rule.min}-${rule.max}`;
    values.push(value);
  }
  const [from = 0, to = from] = values;
  return from > to ? `the range ${JSON.stringify(range)} runs backwards` : null;
}

function fieldValue(text: string, rule: FieldRule): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  // A name is the whole English name or its first three letters, in any case.
  const upper = text.toUpperCase();
  const named =
    rule.names?.findIndex((name) => name === upper || (upper.length === 3 && name.startsWith(upper))) ?? -1;
  if (named < 0) return undefined;
  return rule.min + named;
}
