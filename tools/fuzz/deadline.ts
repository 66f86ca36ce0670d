import { Violation } from "./violation.js";

/** How long one send, answer or settlement may take before the fuzzer calls it a hang. */
export const STEP_DEADLINE_MS = 10_000;

/** Thrown when an operation outlives its deadline; the session it ran in is not trusted afterwards. */
export class Hang extends Violation {}

/**
 * `work`, or a Hang naming `what` once `ms` of real time have passed. The deadline is wall-clock time
 * on purpose: the pipelines under test run on virtual clocks that only move when told to.
 */
export async function within<T>(what: string, work: Promise<T>, ms = STEP_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Hang(`no answer: ${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
