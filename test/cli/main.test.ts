import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { main } from "../../laptop/cli/main.js";
import { captureOutput } from "../support/captured-output.js";

const output = captureOutput();

describe("sas", () => {
  it("refuses to start on a malformed OTLP endpoint, naming the setting, before it opens anything", async () => {
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318");
    try {
      expect(await main(["start", "--data", ":memory:", "--port", "0"])).toBe(2);
      expect(output.stderr).toContain("OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL");
      expect(output.stdout).toBe("");
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it.each([
    [["demo", "--orders", "ten"], "--orders must be an integer"],
    [["demo", "--transient-faults", "1.5"], "--transient-faults must be a number from 0 to 1"],
    [["demo", "--slow", "0.6", "--lost-replies", "0.6"], "the fault rates add up to 1.2"],
    [["demo", "--agent", "carrier-pigeon"], "--agent must be activity or queue"],
    [["demo", "--colour", "blue"], "unknown flag --colour"],
    [["start", "--port", "70000"], "--port must be an integer from 0 to 65535"],
    [["launch"], "unknown command launch"],
    [["orders", "resubmit", "ord-1"], "sas orders resubmit needs --operator <name>"],
    [["start", "--host", "0.0.0.0"], "--host 0.0.0.0 is reachable from other machines: give --api-token"],
    [["start", "--host", "0.0.0.0", "--api-token", "short"], "--api-token must be at least 16 characters"],
    [["orders", "show", "ord-1", "--colour"], "unknown flag --colour"],
    [["start", "--partner-url", "partner:7072"], "--partner-url must be an http or https URL"],
    [
      ["start", "--partner-url", "http://127.0.0.1:7072", "--slow", "0.1"],
      "--slow configures the simulated partner, which --partner-url replaces: give it to sas partner",
    ],
  ])("says what is wrong in one line, points to --help, and exits 2 for %j", async (argv, message) => {
    expect(await main(argv)).toBe(2);
    const lines = output.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(message);
    expect(lines[1]).toMatch(/^run 'sas( \w+)? --help' for (its flags|the commands)$/);
    expect(output.stderr).not.toContain("usage:");
  });

  it("names the chaos command and points to its own --help for a bad chaos flag", async () => {
    expect(await main(["chaos", "--kills", "many"])).toBe(2);
    expect(output.stderr).toBe(
      "sas chaos: --kills must be an integer from 0 to 1000; got many\nrun 'sas chaos --help' for its flags\n",
    );
  });

  it.each([
    [["orders", "list", "--bogus"], "sas orders: unknown flag --bogus"],
    [["orders", "list", "--bogus=3"], "sas orders: unknown flag --bogus=3"],
    [["demo", "--orders"], "sas demo: --orders needs a value"],
    [["stats", "--json=yes"], "sas stats: --json=yes: --json takes no value"],
    [["launch"], "sas: unknown command launch"],
  ])("F27: a bad flag is named as typed for %j", async (argv, first) => {
    expect(await main(argv)).toBe(2);
    expect(output.stderr.split("\n")[0]).toBe(first);
  });

  it("prints usage with --help and exits 0", async () => {
    expect(await main(["--help"])).toBe(0);
    expect(output.stdout).toContain("commands:");
  });

  it("creates a --data folder that does not exist yet", async () => {
    const data = join(mkdtempSync(join(tmpdir(), "sas-cli-")), "new", "folder");
    try {
      expect(await main(["demo", "--orders", "2", "--data", data, "--json"])).toBe(0);
      expect(existsSync(join(data, "sas.sqlite"))).toBe(true);
    } finally {
      rmSync(dirname(dirname(data)), { recursive: true, force: true });
    }
  });

  it("stops at start-up on an invalid setting, naming it", async () => {
    vi.stubEnv("STEP_TIMEOUT_MS", "soon");
    try {
      expect(await main(["demo", "--orders", "1"])).toBe(2);
      expect(output.stderr).toContain('STEP_TIMEOUT_MS="soon": must be an integer');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
