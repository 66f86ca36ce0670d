import { describe, expect, it } from "vitest";
import { parseSoakOptions } from "../../laptop/cli/soak-command.js";
import { UsageError } from "../../laptop/cli/usage-error.js";

describe("sas soak flags", () => {
  it("needs --minutes and takes the rest from defaults", () => {
    expect(() => parseSoakOptions([])).toThrow(new UsageError("--minutes is required"));
    expect(parseSoakOptions(["--minutes", "2"])).toMatchObject({
      minutes: 2,
      rate: 20,
      intervalSeconds: 60,
      warmupMinutes: 5,
      agent: "activity",
    });
  });

  it.each([
    [["--minutes", "0"], /--minutes must be an integer from 1/],
    [["--minutes", "1", "--interval-seconds", "1"], /--interval-seconds must be an integer from 5/],
    [["--minutes", "1", "--lost-replies", "x"], /--lost-replies must be a number from 0 to 1/],
  ])("refuses %j naming the flag", (args, message) => {
    expect(() => parseSoakOptions(args)).toThrow(message);
  });
});
