import fc from "fast-check";
import { within } from "./deadline.js";
import { Tally, type TallyCounts } from "./tally.js";
import type { FuzzTarget, TargetSession } from "./target.js";
import { shown } from "./violation.js";

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
  /** True when the input fails on a fresh session; otherwise the runs before it are needed (replay the seed). */
  readonly failsAlone: boolean;
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
 * runs; fast-check then shrinks the input, and the smallest one that still fails is reported, with
 * whether it fails on its own on a fresh session or only after the runs before it.
 */
export async function fuzzTarget<Case>(
  target: FuzzTarget<Case>,
  settings: FuzzSettings,
): Promise<TargetReport> {
  const started = performance.now();
  const tally = new Tally();
  const sessions = new SessionSlot(target);
  const property = fc.asyncProperty(target.arbitrary, async (value) => {
    try {
      await (await sessions.get()).run(value, tally);
    } catch (error) {
      tally.freeze();
      // What a violation left behind (a stray record, a hung consumer) must not fail the next input.
      await sessions.discard();
      throw error;
    }
  });
  const details = await fc.check(property, { numRuns: settings.runs, seed: settings.seed });
  await sessions.discard();
  const [value] = details.failed ? (details.counterexample ?? []) : [];
  const alone = details.failed ? await failureAlone(sessions, value as Case) : null;
  const counterexample: Counterexample | null = details.failed
    ? {
        value: shown(value, 4_000),
        violation: messageOf(alone ?? details.errorInstance),
        path: details.counterexamplePath,
        shrinks: details.numShrinks,
        failsAlone: alone !== null,
      }
    : null;
  return {
    target: target.name,
    runs: details.numRuns,
    ...tally.snapshot(),
    violations: counterexample ? 1 : 0,
    durationMs: Math.round(performance.now() - started),
    counterexample,
  };
}

/** What `value` breaks on a session that has seen nothing else, if anything. */
async function failureAlone<Case>(sessions: SessionSlot<Case>, value: Case): Promise<unknown> {
  try {
    await (await sessions.get()).run(value, new Tally());
    return null;
  } catch (error) {
    return error ?? new Error("thrown without a reason");
  } finally {
    await sessions.discard();
  }
}

/** The target's open session, opened on first use and after each discard. */
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
