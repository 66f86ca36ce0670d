import { describe, expect, it } from "vitest";
import { parseChaosOptions } from "../../laptop/cli/chaos-command.js";
import { UsageError } from "../../laptop/cli/usage-error.js";

describe("sas chaos flags", () => {
  it("takes the defaults and the flags given", () => {
    const options = parseChaosOptions(["--orders", "300", "--kills", "3", "--agent", "queue", "--json"]);
    expect(options).toMatchObject({
      orders: 300,
      kills: 3,
      agent: "queue",
      json: true,
      rate: 50,
      partnerOutages: 1,
      upgrade: false,
    });
    expect(parseChaosOptions(["--upgrade"])).toMatchObject({ upgrade: true, kills: 3 });
  });

  it.each([
    [["--orders", "0"], /--orders must be an integer from 1/],
    [["--rate", "fast"], /--rate must be an integer/],
    [["--agent", "thread"], /--agent must be activity or queue/],
    [["--transient-faults", "2"], /--transient-faults must be a number from 0 to 1/],
    [["--data", ":memory:"], /--data must be a directory/],
    [["--upgrade", "--kills", "0"], /--upgrade needs --kills of at least 1/],
  ])("refuses %j naming the flag", (args, message) => {
    expect(() => parseChaosOptions(args)).toThrow(UsageError);
    expect(() => parseChaosOptions(args)).toThrow(message);
  });

  it("refuses an unknown flag", () => {
    expect(() => parseChaosOptions(["--kill", "3"])).toThrow(/Unknown option '--kill'/);
  });
});
