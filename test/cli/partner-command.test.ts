import { describe, expect, it } from "vitest";
import { main } from "../../laptop/cli/main.js";
import { describePartner } from "../../laptop/cli/partner-controls-command.js";
import { captureOutput } from "../support/captured-output.js";

const output = captureOutput();

describe("sas partner's actions, on the command line", () => {
  it.each([
    [
      ["partner", "faults"],
      "sas partner faults needs at least one of --transient, --permanent, --slow, --lost-reply",
    ],
    [["partner", "faults", "--transient", "1.5"], "--transient must be a number from 0 to 1; got 1.5"],
    [["partner", "faults", "--transient-faults", "0.5"], "unknown flag --transient-faults"],
    [["partner", "outage"], "sas partner outage needs --seconds <n> or --end"],
    [["partner", "outage", "--seconds", "0"], "--seconds must be an integer from 1 to 86400; got 0"],
    [["partner", "outage", "--seconds", "5", "--end"], "give --seconds <n> or --end, not both"],
    [["partner", "status", "--end"], "unknown flag --end"],
    [["partner", "status", "--url", "127.0.0.1:7071"], "--url must be an http(s) URL"],
    [["partner", "restart"], "unexpected argument restart"],
  ])("says what is wrong, points to sas partner --help, and exits 2 for %j", async (argv, message) => {
    expect(await main(argv)).toBe(2);
    expect(output.stderr).toContain(message);
    expect(output.stderr).toContain("run 'sas partner --help' for its flags");
  });

  it.each([
    ["status", "usage: sas partner status"],
    ["faults", "usage: sas partner faults [--transient <rate>]"],
    ["outage", "usage: sas partner outage --seconds <n> | --end"],
  ])("prints the %s action's own usage with --help, and exits 0", async (action, usage) => {
    expect(await main(["partner", action, "--help"])).toBe(0);
    expect(output.stdout).toContain(usage);
    expect(output.stdout).toContain("--token <token>");
    expect(output.stdout).not.toContain("--ledger");
  });

  it("says who reaches an unreachable host, and exits 1", async () => {
    expect(await main(["partner", "status", "--url", "http://127.0.0.1:9"])).toBe(1);
    expect(output.stderr).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:9: /);
  });

  it("prints the rates, the outage and the changes, oldest first", () => {
    const text = describePartner({
      faults: { transient: 0.5, permanent: 0.01, slow: 0, lostReply: 0 },
      outage: { since: "2026-01-01T00:01:00.000Z", until: "2026-01-01T00:01:30.000Z" },
      seed: 7,
      slowMs: 8000,
      changes: [
        {
          at: "2026-01-01T00:00:00.000Z",
          change: "faults",
          by: "settings",
          faults: { transient: 0.2, permanent: 0.01, slow: 0, lostReply: 0 },
        },
        {
          at: "2026-01-01T00:01:00.000Z",
          change: "outage",
          by: "operator",
          until: "2026-01-01T00:01:30.000Z",
        },
        { at: "2026-01-01T00:01:10.000Z", change: "recovered", by: "operator" },
      ],
    });
    expect(text).toBe(
      [
        "faults   transient 0.5 · permanent 0.01 · slow 0 · lost reply 0   (seed 7, slow answers after 8000 ms)",
        "outage   until 2026-01-01T00:01:30.000Z (since 2026-01-01T00:01:00.000Z)",
        "changes  the last 3, oldest first:",
        "  2026-01-01T00:00:00.000Z  faults: transient 0.2 · permanent 0.01 · slow 0 · lost reply 0  (by settings)",
        "  2026-01-01T00:01:00.000Z  outage until 2026-01-01T00:01:30.000Z  (by operator)",
        "  2026-01-01T00:01:10.000Z  recovered  (by operator)",
        "",
      ].join("\n"),
    );
  });
});
