/**
 * The six-field NCRONTAB expressions a timer trigger takes (`second minute hour day month day-of-week`),
 * checked field by field so a schedule the host would refuse at load is refused at start-up with the
 * field and the reason: `*`, a value, a range `a-b`, a step `*\/n`, `a-b/n` or `a/n`, and lists of those;
 * months and days of the week also by their English names, whole or in three letters.
 *
 * Occurrences are computed in UTC, as the host does unless WEBSITE_TIME_ZONE is set. A time matches when
 * every field matches: a day must be in both the day-of-month and the day-of-week fields (NCrontab does
 * not take either as cron's crontab(5) does when both are restricted).
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

/** The values each of the six fields allows, in field order: second, minute, hour, day, month, weekday. */
type FieldSets = readonly ReadonlySet<number>[];

/**
 * The first time after `after` (whole seconds, UTC) that `expression` matches, or null when none comes
 * within five years (as for February 30th). Throws on an expression `ncrontabProblem` refuses.
 */
export function nextOccurrence(expression: string, after: Date): Date | null {
  const problem = ncrontabProblem(expression);
  if (problem) throw new RangeError(`the schedule ${JSON.stringify(expression)} ${problem}`);
  const sets = fieldSets(expression);
  const at = new Date(Math.floor(after.getTime() / 1_000) * 1_000 + 1_000);
  const limit = after.getTime() + 5 * 366 * 86_400_000;
  while (at.getTime() <= limit) {
    if (!has(sets, 4, at.getUTCMonth() + 1)) {
      at.setUTCMonth(at.getUTCMonth() + 1, 1);
      at.setUTCHours(0, 0, 0);
    } else if (!has(sets, 3, at.getUTCDate()) || !has(sets, 5, at.getUTCDay())) {
      at.setUTCDate(at.getUTCDate() + 1);
      at.setUTCHours(0, 0, 0);
    } else if (!has(sets, 2, at.getUTCHours())) {
      at.setUTCHours(at.getUTCHours() + 1, 0, 0);
    } else if (!has(sets, 1, at.getUTCMinutes())) {
      at.setUTCMinutes(at.getUTCMinutes() + 1, 0);
    } else if (!has(sets, 0, at.getUTCSeconds())) {
      at.setUTCSeconds(at.getUTCSeconds() + 1);
    } else {
      return at;
    }
  }
  return null;
}

function has(sets: FieldSets, field: number, value: number): boolean {
  return sets[field]?.has(value) ?? false;
}

function fieldSets(expression: string): FieldSets {
  const fields = expression.trim().split(/\s+/);
  return FIELDS.map((rule, index) => {
    const values = new Set<number>();
    for (const part of (fields[index] ?? "").split(",")) {
      const [range = "", step = "1"] = part.split("/");
      const [from, to] = bounds(range, rule, part.includes("/"));
      for (let value = from; value <= to; value += Number(step)) values.add(value);
    }
    return values;
  });
}

/** `*` is the whole field, `a-b` itself, and a lone `a` under a step (`a/n`) runs to the field's end. */
function bounds(range: string, rule: FieldRule, stepped: boolean): [number, number] {
  if (range === "*") return [rule.min, rule.max];
  const [first = "", last] = range.split("-");
  const from = fieldValue(first, rule) ?? rule.min;
  if (last !== undefined) return [from, fieldValue(last, rule) ?? rule.max];
  return [from, stepped ? rule.max : from];
}
