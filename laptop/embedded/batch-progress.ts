import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { isTerminal, PROCESS_STATES, type ProcessState } from "../../src/domain/state-record.js";
import type { LocalPipeline } from "./pipeline.js";
import { createStatusLine, endStatusLine, type LineSink } from "./status-line.js";

/** Where one batch stands: its orders per state, those not yet accepted, those dead-lettered. */
export interface BatchProgress {
  readonly states: Readonly<Partial<Record<ProcessState, number>>>;
  /** Posted to the orders queue, no state record yet. */
  readonly queued: number;
  readonly deadLettered: number;
}

/** The progress line: the seven states by name, and what is not a state said in words. */
export function describeProgress(progress: BatchProgress): string {
  const parts = PROCESS_STATES.filter((state) => (progress.states[state] ?? 0) > 0).map(
    (state) => `${state} ${progress.states[state]}`,
  );
  if (progress.queued > 0) parts.unshift(`${progress.queued} not yet accepted`);
  if (progress.deadLettered > 0) parts.push(`dead-lettered ${progress.deadLettered}`);
  return parts.join(" · ");
}

export function isSettled(progress: BatchProgress, total: number): boolean {
  const final = PROCESS_STATES.filter(isTerminal).reduce((n, state) => n + (progress.states[state] ?? 0), 0);
  return final + progress.deadLettered >= total;
}

async function readProgress(pipeline: LocalPipeline, orderIds: readonly string[]): Promise<BatchProgress> {
  const states: Partial<Record<ProcessState, number>> = {};
  let queued = 0;
  for (const id of orderIds) {
    const state = (await pipeline.states.get(id))?.processState;
    if (state === undefined) queued++;
    else states[state] = (states[state] ?? 0) + 1;
  }
  const deadLettered = (await pipeline.ordersQueue.deadLetterQueue.peek(10_000)).length;
  return { states, queued, deadLettered };
}

/** Shows the batch's progress (one live line on a terminal, a line per change elsewhere) until it settles. */
export async function followBatch(
  pipeline: LocalPipeline,
  orderIds: readonly string[],
  out: LineSink,
): Promise<void> {
  const clock = new SystemClock();
  const show = createStatusLine(out);
  for (;;) {
    const progress = await readProgress(pipeline, orderIds);
    show(describeProgress(progress));
    if (isSettled(progress, orderIds.length)) break;
    await clock.sleep(250);
  }
  endStatusLine(out);
  out.write(`demo batch finished; ${pipeline.alerts.raised.length} operator alert(s), see the log\n`);
}
