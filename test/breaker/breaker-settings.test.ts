import { describe, expect, it } from "vitest";
import {
  BREAKER_NUMBER_SETTINGS,
  BREAKER_SETTING_NAMES,
  loadBreakerSettings,
} from "../../src/config/breaker-settings.js";
import { SettingsError } from "../../src/config/settings.js";

function problemsOf(env: Record<string, string>, partnerCallTimeoutMs?: number): readonly string[] {
  try {
    loadBreakerSettings(env, partnerCallTimeoutMs === undefined ? {} : { partnerCallTimeoutMs });
    return [];
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    return error.problems;
  }
}

describe("breaker settings", () => {
  it("defaults to a breaker that is on", () => {
    expect(loadBreakerSettings({}, { partnerCallTimeoutMs: 10_000 })).toEqual({
      enabled: true,
      failureRun: 9,
      failureRate: 0.8,
      minCalls: 30,
      windowMs: 30_000,
      openMs: 5_000,
      maxOpenMs: 60_000,
      probeLeaseMs: 15_000,
      admitWaitMs: 1_000,
    });
  });

  it("reads every setting", () => {
    const settings = loadBreakerSettings({
      BREAKER_ENABLED: "False",
      BREAKER_FAILURE_RUN: "8",
      BREAKER_FAILURE_RATE: ".25",
      BREAKER_MIN_CALLS: "50",
      BREAKER_WINDOW_MS: "60000",
      BREAKER_OPEN_MS: "2000",
      BREAKER_MAX_OPEN_MS: "2000",
      BREAKER_PROBE_LEASE_MS: "20000",
      BREAKER_ADMIT_WAIT_MS: "250",
    });
    expect(settings).toEqual({
      enabled: false,
      failureRun: 8,
      failureRate: 0.25,
      minCalls: 50,
      windowMs: 60_000,
      openMs: 2_000,
      maxOpenMs: 2_000,
      probeLeaseMs: 20_000,
      admitWaitMs: 250,
    });
    expect(BREAKER_SETTING_NAMES).toHaveLength(Object.keys(BREAKER_NUMBER_SETTINGS).length + 1);
  });

  it.each([
    ["BREAKER_ENABLED", "yes", /BREAKER_ENABLED="yes": must be true or false/],
    ["BREAKER_FAILURE_RUN", "0", /BREAKER_FAILURE_RUN="0": must be an integer from 1 to 1000/],
    ["BREAKER_FAILURE_RUN", "2.5", /BREAKER_FAILURE_RUN/],
    ["BREAKER_FAILURE_RATE", "0", /BREAKER_FAILURE_RATE="0": must be a number from 0.01 to 1/],
    ["BREAKER_FAILURE_RATE", "1.5", /BREAKER_FAILURE_RATE/],
    ["BREAKER_FAILURE_RATE", "half", /BREAKER_FAILURE_RATE/],
    ["BREAKER_MIN_CALLS", "-1", /BREAKER_MIN_CALLS/],
    ["BREAKER_WINDOW_MS", "999", /BREAKER_WINDOW_MS/],
    ["BREAKER_OPEN_MS", "soon", /BREAKER_OPEN_MS/],
    ["BREAKER_MAX_OPEN_MS", "1e5", /BREAKER_MAX_OPEN_MS/],
    ["BREAKER_PROBE_LEASE_MS", "500", /BREAKER_PROBE_LEASE_MS/],
    ["BREAKER_ADMIT_WAIT_MS", "5", /BREAKER_ADMIT_WAIT_MS="5": must be an integer from 10 to 60000/],
  ])("refuses %s=%s with a message naming it", (name, value, message) => {
    expect(problemsOf({ [name]: value })).toEqual([expect.stringMatching(message)]);
  });

  it("checks the settings against each other and the partner call timeout", () => {
    expect(problemsOf({ BREAKER_OPEN_MS: "90000" })).toEqual([
      "BREAKER_OPEN_MS (90000) must not exceed BREAKER_MAX_OPEN_MS (60000)",
    ]);
    expect(problemsOf({ BREAKER_PROBE_LEASE_MS: "10000" }, 10_000)).toEqual([
      expect.stringMatching(
        /BREAKER_PROBE_LEASE_MS \(10000\) must be longer than PARTNER_CALL_TIMEOUT_MS \(10000\)/,
      ),
    ]);
  });

  it("names every bad setting at once, even with the breaker off", () => {
    expect(
      problemsOf({ BREAKER_ENABLED: "false", BREAKER_FAILURE_RUN: "x", BREAKER_WINDOW_MS: "1" }),
    ).toEqual([expect.stringMatching(/^BREAKER_FAILURE_RUN/), expect.stringMatching(/^BREAKER_WINDOW_MS/)]);
  });
});
