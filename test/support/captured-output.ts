import { afterEach, beforeEach, vi } from "vitest";

/** What the code under test wrote to stdout and stderr in the current test. */
export interface CapturedOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/** Captures stdout and stderr afresh for every test of the enclosing suite (or file). */
export function captureOutput(): CapturedOutput {
  const captured = { stdout: "", stderr: "" };
  beforeEach(() => {
    captured.stdout = "";
    captured.stderr = "";
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      captured.stderr += String(chunk);
      return true;
    });
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      captured.stdout += String(chunk);
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());
  return captured;
}
