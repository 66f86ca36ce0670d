import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  compensationDeadline,
  leavesRoomToRecord,
  nextStepDeadline,
  RECORD_MARGIN_MS,
} from "../../src/domain/deadline-rules.js";

const ROOT = join(import.meta.dirname, "..", "..");
const OWNER = "src/domain/deadline-rules.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Arithmetic on a deadline setting, or an instant moved by one: a deadline computed outside its owner. */
const DEADLINE_ARITHMETIC = [
  /\b\w*(?:TimeoutMs|extensionMs|maxDeferralMs)\b\s*[-+*/]/,
  /[-+*/]\s*[\w.]*(?:TimeoutMs|extensionMs|maxDeferralMs)\b/,
  /addMilliseconds\([^)]*(?:TimeoutMs|extensionMs|maxDeferralMs)/,
];

/** Where order deadlines are used: the app and the laptop's own composition and simulation. */
const CALLERS = ["src", "laptop/embedded", "laptop/simulation", "laptop/cli"];

describe("F26-1: deadline rules have one owner", () => {
  it("no module but domain/deadline-rules.ts computes a deadline from a timeout setting", () => {
    const offenders = CALLERS.flatMap((dir) => sourceFiles(join(ROOT, dir)))
      .map((path) => relative(ROOT, path))
      .filter((path) => path !== OWNER)
      .flatMap((path) =>
        readFileSync(join(ROOT, path), "utf8")
          .split("\n")
          .map((line, i) => ({ line, at: `${path}:${i + 1}` }))
          .filter(({ line }) => !line.trim().startsWith("*") && !line.trim().startsWith("//"))
          .filter(({ line }) => DEADLINE_ARITHMETIC.some((rule) => rule.test(line)))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });

  it("a compensation gets a step timeout for each completed step and one more", () => {
    expect(compensationDeadline("2026-01-01T00:00:00.000Z", 30_000, 2)).toBe("2026-01-01T00:01:30.000Z");
  });

  it("the step after a chained one keeps the chain's deadline only while half a step timeout is left", () => {
    const chainUntil = "2026-01-01T00:00:30.000Z";
    expect(nextStepDeadline("2026-01-01T00:00:15.000Z", 30_000, chainUntil)).toBe(chainUntil);
    expect(nextStepDeadline("2026-01-01T00:00:15.001Z", 30_000, chainUntil)).toBe("2026-01-01T00:00:45.001Z");
    expect(nextStepDeadline("2026-01-01T00:00:15.000Z", 30_000)).toBe("2026-01-01T00:00:45.000Z");
  });

  it("the Agent's activity records a reply only with the record margin, or a quarter step timeout, to spare", () => {
    const deadline = "2026-01-01T00:00:30.000Z";
    const justInTime = new Date(Date.parse(deadline) - RECORD_MARGIN_MS - 1).toISOString();
    const tooLate = new Date(Date.parse(deadline) - RECORD_MARGIN_MS).toISOString();
    expect(leavesRoomToRecord(deadline, justInTime, 30_000)).toBe(true);
    expect(leavesRoomToRecord(deadline, tooLate, 30_000)).toBe(false);
    // A 2 s step timeout spares a quarter of it, 500 ms, not the whole margin.
    expect(leavesRoomToRecord(deadline, "2026-01-01T00:00:29.499Z", 2_000)).toBe(true);
  });
});

describe("F26-3: workflow versions differ by named capabilities", () => {
  it("no module of the app branches on a workflow version number", () => {
    const offenders = sourceFiles(join(ROOT, "src"))
      .map((path) => relative(ROOT, path))
      .filter((path) =>
        /[wW]orkflowVersion\s*[<>]=?\s*\w|\b[A-Z_]+_FROM\b/.test(readFileSync(join(ROOT, path), "utf8")),
      );
    expect(offenders).toEqual([]);
  });
});
