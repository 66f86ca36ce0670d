import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseOptions, USAGE, UsageError } from "../../bench/supervisor-options.js";

const SUPERVISOR_BENCH = join(import.meta.dirname, "../../bench/supervisor.ts");

function bench(args: readonly string[]) {
  const result = spawnSync(process.execPath, ["--import", "tsx", SUPERVISOR_BENCH, ...args], {
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("npm run bench:supervisor options", () => {
  it("default to both stores at 10,000, 100,000 and 1,000,000 records, nine scans, no audit", () => {
    expect(parseOptions([])).toEqual({
      sizes: [10_000, 100_000, 1_000_000],
      stores: ["sqlite", "cosmos"],
      scans: 9,
      audit: false,
      json: false,
    });
  });

  it("take the sizes, stores, scans and audit asked for", () => {
    expect(
      parseOptions(["--sizes", "1000, 5000", "--stores", "cosmos", "--scans", "2", "--audit", "--json"]),
    ).toEqual({
      sizes: [1_000, 5_000],
      stores: ["cosmos"],
      scans: 2,
      audit: true,
      json: true,
    });
  });

  it.each([
    [["--sizes", "999"]],
    [["--sizes", "1e7"]],
    [["--sizes", "10000,abc"]],
    [["--stores", "sqlite,postgres"]],
    [["--stores", ""]],
    [["--scans", "0"]],
    [["--scans", "1.5"]],
    [["--size", "10000"]],
    [["--json=yes"]],
    [["10000"]],
  ])("refuse %j", (args) => {
    expect(() => parseOptions(args)).toThrow(UsageError);
  });

  it.each([
    [["--scans", "0"], "--scans 0: must be an integer from 1 to 100"],
    [["--bogus"], "Unknown option '--bogus'"],
  ])("%j: the script prints the reason and its usage, seeds nothing, and exits 2", (args, reason) => {
    const run = bench(args);
    expect(run.stderr).toBe(`${reason}\n${USAGE}\n`);
    expect(run.stdout).toBe("");
    expect(run.status).toBe(2);
  });
});
