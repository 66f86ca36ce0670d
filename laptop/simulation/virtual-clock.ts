import type { Clock } from "../../src/ports/clock.js";

interface Sleeper {
  readonly wakeAt: number;
  readonly order: number;
  readonly resolve: () => void;
}

/**
 * Time that moves only when a test moves it. Sleepers wake in time order as `advance` passes their
 * deadline, so code that backs off or waits for a deadline runs in microseconds and deterministically.
 */
export class VirtualClock implements Clock {
  private nowMs: number;
  private sleepers: Sleeper[] = [];
  private nextOrder = 0;

  constructor(start: Date | string = "2026-01-01T00:00:00.000Z") {
    this.nowMs = typeof start === "string" ? Date.parse(start) : start.getTime();
  }

  now(): Date {
    return new Date(this.nowMs);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      const sleeper: Sleeper = {
        wakeAt: this.nowMs + ms,
        order: this.nextOrder++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Number of sleeps not yet woken. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  /**
   * Moves time forward by `ms`, waking each sleeper at its own deadline in order and letting the
   * promise callbacks it triggers run before time moves on.
   */
  async advance(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError("a virtual clock cannot go backwards");
    const target = this.nowMs + ms;
    for (;;) {
      const next = this.earliestSleeper();
      if (!next || next.wakeAt > target) break;
      this.sleepers = this.sleepers.filter((s) => s !== next);
      this.nowMs = Math.max(this.nowMs, next.wakeAt);
      next.resolve();
      await flushMicrotasks();
    }
    this.nowMs = target;
    await flushMicrotasks();
  }

  private earliestSleeper(): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.sleepers) {
      if (!best || s.wakeAt < best.wakeAt || (s.wakeAt === best.wakeAt && s.order < best.order)) best = s;
    }
    return best;
  }
}

/** One turn of the event loop: every promise callback queued so far runs first. */
function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
