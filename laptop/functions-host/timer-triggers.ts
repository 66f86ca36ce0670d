import { nextOccurrence } from "../../src/config/ncrontab.js";
import type { Clock } from "../../src/ports/clock.js";
import type { Logger } from "../../src/ports/logger.js";
import { type BindingData, invocationContextFor } from "../worker/invocation-context.js";
import { type CapturedFunction, triggerOf } from "../worker/registration-capture.js";

export interface TimerTriggerOptions {
  /** The functions with a `timerTrigger`. */
  readonly functions: readonly CapturedFunction[];
  /** Resolves `%SETTING%` in a schedule. */
  readonly resolve: (text: string) => string;
  readonly clock: Clock;
  readonly bindingData: BindingData;
  readonly logger: Logger;
}

/** What a timer trigger's handler receives, in the shape the Node.js worker gives it. */
export interface TimerInfo {
  readonly isPastDue: boolean;
  readonly scheduleStatus: { readonly last: string; readonly next: string; readonly lastUpdated: string };
}

export interface TimerTriggers {
  close(): Promise<void>;
}

/**
 * Runs each timer trigger on its NCRONTAB schedule (six fields, UTC), one invocation at a time per
 * function as the host's singleton lock does: an occurrence that passes while the previous invocation
 * still runs is fired once when it ends, with `isPastDue` true, and the ones skipped over are dropped.
 * A schedule that can be resolved but never occurs is logged and left idle.
 */
export function startTimerTriggers(options: TimerTriggerOptions): TimerTriggers {
  const stop = new AbortController();
  const loops = options.functions.map((fn) => runTimer(fn, options, stop.signal));
  return {
    close: async () => {
      stop.abort();
      await Promise.all(loops);
    },
  };
}

async function runTimer(fn: CapturedFunction, options: TimerTriggerOptions, signal: AbortSignal) {
  const { clock, logger } = options;
  const schedule = options.resolve(String(triggerOf(fn)?.schedule ?? ""));
  let last = clock.now();
  let due = nextOccurrence(schedule, last);
  while (due && !signal.aborted) {
    try {
      await clock.sleep(Math.max(0, due.getTime() - clock.now().getTime()), signal);
    } catch {
      return;
    }
    const now = clock.now();
    // A timer may wake a hair early: never fire the same occurrence twice.
    const next = nextOccurrence(schedule, new Date(Math.max(now.getTime(), due.getTime())));
    const timer: TimerInfo = {
      isPastDue: now.getTime() - due.getTime() >= 1_000,
      scheduleStatus: {
        last: last.toISOString(),
        next: (next ?? due).toISOString(),
        lastUpdated: now.toISOString(),
      },
    };
    // As the host logs every execution it starts.
    logger.info("host.timer.fired", {
      functionName: fn.name,
      scheduled: due.toISOString(),
      isPastDue: timer.isPastDue,
    });
    const context = invocationContextFor(fn, { bindingData: options.bindingData, logger });
    try {
      await fn.handler(timer, context);
    } catch (error) {
      logger.warn("host.function.failed", { functionName: fn.name, schedule, error });
    }
    last = now;
    // From when this invocation began: occurrences that passed while it ran collapse into one, fired at once.
    due = next;
  }
  if (!due) logger.warn("host.timer.never", { functionName: fn.name, schedule });
}
