import { describe, expect, it } from "vitest";
import { ncrontabProblem } from "./ncrontab.js";

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
