// How a yardstick's child process ended, read as its result or the reason it has none: what bench.ts,
// side-by-side.ts and work.ts share (bench-report.ts turns the outcomes into rows).
/** A child process's result, or why there is none; `seconds` is how long it ran either way. */
export type RunOutcome<T> =
  | { readonly ok: true; readonly value: T; readonly seconds: number }
  | { readonly ok: false; readonly error: string; readonly seconds: number };

export interface ChildExit {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
}

/**
 * A child's outcome from how it ended: its result is the last line of its stdout, as JSON, and counts
 * only with exit 0; otherwise the reason is the child's own (`explain` reads its result), else the
 * first line of its stderr naming an error, else its last.
 */
export function outcomeOf<T>(
  exit: ChildExit,
  seconds: number,
  plan: {
    readonly timeoutSeconds: number;
    /** Why a run that printed its result still exited non-zero, when the result can say. */
    readonly explain?: (value: unknown) => string | undefined;
  },
): RunOutcome<T> {
  const last = exit.stdout.trim().split("\n").pop() ?? "";
  let value: unknown;
  try {
    value = JSON.parse(last);
  } catch {
    value = undefined;
  }
  if (exit.timedOut)
    return { ok: false, error: `stopped after its limit of ${plan.timeoutSeconds} s`, seconds };
  if (exit.code === 0 && value !== undefined) return { ok: true, value: value as T, seconds };
  const why =
    (value !== undefined ? plan.explain?.(value) : undefined) ??
    firstErrorLine(exit.stderr) ??
    (value === undefined ? "printed no JSON result" : "no reason given");
  return { ok: false, error: `exit ${exit.code ?? exit.signal}: ${why}`, seconds };
}

/** The line of a child's stderr that says what went wrong: the first naming an error, else the last. */
function firstErrorLine(stderr: string): string | undefined {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return (lines.find((line) => /error/i.test(line)) ?? lines[lines.length - 1])?.slice(0, 300);
}

/** Why `sas demo` exited 1 although it printed its summary: broken invariants, or orders left unsettled. */
export function explainDemo(value: unknown): string | undefined {
  const demo = value as {
    invariants?: { violations?: string[] };
    orders?: Record<string, number>;
  };
  const violations = demo.invariants?.violations ?? [];
  const { Pending = 0, Processing = 0, Compensating = 0 } = demo.orders ?? {};
  const unsettled = Pending + Processing + Compensating;
  const reasons = [
    ...(violations.length > 0 ? [`invariants broken: ${violations.slice(0, 2).join("; ")}`] : []),
    ...(unsettled > 0 ? [`${unsettled} orders unsettled at the timeout`] : []),
  ];
  return reasons.length > 0 ? reasons.join("; ") : undefined;
}
