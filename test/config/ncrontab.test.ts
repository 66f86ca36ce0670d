import { describe, expect, it } from "vitest";
import { ncrontabProblem, nextOccurrence } from "../../src/config/ncrontab.js";

describe("ncrontabProblem", () => {
  it.each([
    "0 */1 * * * *",
    "*/10 * * * * *",
    "0 0 9-17 * * Mon-Fri",
    "0 5,35 * * * *",
    "0 5 * * * *",
    "59 59 23 31 12 6",
    "0 0 0 1 jan-dec/3 sun",
    "0 15/20 * * * *",
    "0 30 8 * February,march Monday-fri",
  ])("accepts %s", (expression) => {
    expect(ncrontabProblem(expression)).toBeNull();
  });

  it.each([
    ["* * * * *", "has 5 fields; it needs six, seconds first"],
    ["", "has 0 fields; it needs six, seconds first"],
    ["0 */1 * * * * *", "has 7 fields; it needs six, seconds first"],
    ["60 * * * * *", 'second field "60": 60 is outside 0-59'],
    ["0 0 24 * * *", 'hour field "24": 24 is outside 0-23'],
    ["0 0 0 0 * *", 'day of month field "0": 0 is outside 1-31'],
    ["0 0 0 * 13 *", 'month field "13": 13 is outside 1-12'],
    ["0 0 0 * * 7", 'day of week field "7": 7 is outside 0-6'],
    ["0 0 0 * * Fun", 'day of week field "Fun": "Fun" is not a number or a name'],
    ["0 0 0 * Ma *", 'month field "Ma": "Ma" is not a number or a name'],
    ["0 0 17-9 * * *", 'hour field "17-9": the range "17-9" runs backwards'],
    ["*/0 * * * * *", 'second field "*/0": the step in "*/0" must be a whole number from 1'],
    ["0 1-2-3 * * * *", 'minute field "1-2-3": "1-2-3" is not a value or a range'],
    ["0 */5/2 * * * *", 'minute field "*/5/2": "*/5/2" has more than one step'],
    ["0 5,,35 * * * *", 'minute field "5,,35": "" is not a number'],
    ["every minute", "has 2 fields; it needs six, seconds first"],
  ])("refuses %s: %s", (expression, problem) => {
    expect(ncrontabProblem(expression)).toBe(problem);
  });
});

describe("nextOccurrence", () => {
  const next = (expression: string, after: string) =>
    nextOccurrence(expression, new Date(after))?.toISOString();

  it.each([
    ["*/10 * * * * *", "2026-03-01T10:00:00.000Z", "2026-03-01T10:00:10.000Z"],
    ["*/10 * * * * *", "2026-03-01T10:00:07.900Z", "2026-03-01T10:00:10.000Z"],
    ["0 */1 * * * *", "2026-03-01T10:00:00.000Z", "2026-03-01T10:01:00.000Z"],
    ["0 5 * * * *", "2026-03-01T10:05:00.000Z", "2026-03-01T11:05:00.000Z"],
    ["0 15/20 * * * *", "2026-03-01T10:36:00.000Z", "2026-03-01T10:55:00.000Z"],
    ["59 59 23 31 12 *", "2026-03-01T00:00:00.000Z", "2026-12-31T23:59:59.000Z"],
    // 2026-03-06 is a Friday: nine on Monday the 9th comes next.
    ["0 0 9-17 * * Mon-Fri", "2026-03-06T17:00:00.000Z", "2026-03-09T09:00:00.000Z"],
    ["0 0 0 1 jan-dec/3 *", "2026-02-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z"],
    // Both day fields must match: the 13th that is a Friday (November 2026).
    ["0 0 0 13 * Fri", "2026-03-14T00:00:00.000Z", "2026-11-13T00:00:00.000Z"],
    ["0 0 0 29 Feb *", "2026-03-01T00:00:00.000Z", "2028-02-29T00:00:00.000Z"],
  ])("%s after %s is %s", (expression, after, expected) => {
    expect(next(expression, after)).toBe(expected);
  });

  it("answers null for a date that never comes, and throws on an expression it refuses", () => {
    expect(next("0 0 0 30 Feb *", "2026-01-01T00:00:00.000Z")).toBeUndefined();
    expect(() => next("* * * * *", "2026-01-01T00:00:00.000Z")).toThrow("has 5 fields");
  });

  it("steps through a minute-level schedule without skipping or repeating", () => {
    let at = new Date("2026-12-31T23:58:00.000Z");
    const seen: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      at = nextOccurrence("30 * * * * *", at) ?? at;
      seen.push(at.toISOString());
    }
    expect(seen).toEqual([
      "2026-12-31T23:58:30.000Z",
      "2026-12-31T23:59:30.000Z",
      "2027-01-01T00:00:30.000Z",
      "2027-01-01T00:01:30.000Z",
    ]);
  });
});
