import fc from "fast-check";
import { Hang, within } from "./deadline.js";
import { Tally, type TallyCounts } from "./tally.js";
import type { FuzzTarget, TargetSession } from "./target.js";
import { shown, Violation } from "./violation.js";

export interface FuzzSettings {
  readonly runs: number;
  readonly seed: number;
}

export interface Counterexample {
  /** fast-check's shrunk input, printed. */
  readonly value: string;
  /** What broke, for that input. */
  readonly violation: string;
  /** Replays exactly this input with the same seed (`path` in fast-check's parameters). */
  readonly path: string | null;
  readonly shrinks: number;
}

export interface TargetReport extends TallyCounts {
  readonly target: string;
  readonly runs: number;
  readonly violations: number;
  readonly durationMs: number;
  readonly counterexample: Counterexample | null;
}

/** A target with its case type hidden, so targets of different cases can be run in one list. */
export interface Fuzzable {
  readonly name: string;
  fuzz(settings: FuzzSettings): Promise<TargetReport>;
}

export function fuzzable<Case>(target: FuzzTarget<Case>): Fuzzable {
  return { name: target.name, fuzz: (settings) => fuzzTarget(target, settings) };
}

/**
 * Runs one target's property `settings.runs` times with fast-check. The first violation stops the
 * runs; fast-check then shrinks the input, and the smallest one that still fails is reported.
 */
export async function fuzzTarget<Case>(
  target: FuzzTarget<Case>,
  settings: FuzzSettings,
): Promise<TargetReport> {
  const started = performance.now();
  const tally = new Tally();
  const sessions = new SessionSlot(target);
  const property = fc.asyncProperty(target.arbitrary, async (value) => {
    const session = await sessions.get();
    try {
      await session.run(value, tally);
    } catch (error) {
      tally.freeze();
      if (error instanceof Hang || !(error instanceof Violation)) await sessions.discard();
      throw error;
    }
  });
  const details = await fc.check(property, { numRuns: settings.runs, seed: settings.seed });
  await sessions.discard();
  const failed = details.failed && details.counterexample !== null;
  return {
    target: target.name,
    runs: details.numRuns,
    ...tally.snapshot(),
    violations: failed ? 1 : 0,
    durationMs: Math.round(performance.now() - started),
    counterexample: failed
      ? {
          value: shown(details.counterexample?.[0], 4_000),
          violation: messageOf(details.errorInstance),
          path: details.counterexamplePath,
          shrinks: details.numShrinks,
        }
      : null,
  };
}

/**
 * The target's open session. After a hang or a crash it is closed and a fresh one is opened for the
 * next run, so that shrinking replays inputs on a session that nothing has left broken or hanging.
 */
class SessionSlot<Case> {
  private current: Promise<TargetSession<Case>> | undefined;

  constructor(private readonly target: FuzzTarget<Case>) {}

  get(): Promise<TargetSession<Case>> {
    this.current ??= within(`opening ${this.target.name}`, this.target.open());
    return this.current;
  }

  async discard(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    if (!current) return;
    // A session that hung may never close; it is abandoned after the deadline.
    await within(
      `closing ${this.target.name}`,
      current.then((session) => session.close()),
    ).catch(() => {});
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
