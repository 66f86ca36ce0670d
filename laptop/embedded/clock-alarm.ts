import type { Clock } from "../../src/ports/clock.js";

/**
 * Calls `onRing` once the clock reaches the time it was set to, through at most one pending sleep on the
 * clock. Setting it later than that sleep, or clearing it, costs nothing: the sleep wakes, finds itself
 * early or unneeded, and sleeps on or ends. Only a time earlier than the pending sleep, or `close`, aborts
 * it. An abort costs an error and an event, which an abort per message made a visible share of the host's CPU.
 */
export class ClockAlarm {
  /** When to ring; Infinity while cleared. */
  private ringAt = Number.POSITIVE_INFINITY;
  /** The pending sleep and when it wakes, if one is pending. */
  private sleep: AbortController | undefined;
  private sleepingUntil = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly onRing: () => void,
  ) {}

  /** Rings at `at` (clock milliseconds), or earlier if already set earlier; once, until set again. */
  ringBy(at: number): void {
    if (this.closed || at >= this.ringAt) return;
    this.ringAt = at;
    if (this.sleep !== undefined && this.sleepingUntil <= at) return;
    this.sleep?.abort();
    this.arm();
  }

  /** Rings no more until set again. */
  clear(): void {
    this.ringAt = Number.POSITIVE_INFINITY;
  }

  /** Never rings again, and leaves no sleep pending on the clock. */
  close(): void {
    this.closed = true;
    this.clear();
    this.sleep?.abort();
    this.sleep = undefined;
  }

  private arm(): void {
    const sleep = new AbortController();
    this.sleep = sleep;
    this.sleepingUntil = this.ringAt;
    this.clock.sleep(this.ringAt - this.clock.now().getTime(), sleep.signal).then(
      () => this.woke(sleep),
      () => {
        // Aborted: a newer sleep or close took over.
      },
    );
  }

  private woke(sleep: AbortController): void {
    if (this.sleep !== sleep) return;
    this.sleep = undefined;
    this.sleepingUntil = Number.POSITIVE_INFINITY;
    if (this.ringAt === Number.POSITIVE_INFINITY) return;
    if (this.clock.now().getTime() < this.ringAt) {
      this.arm();
      return;
    }
    this.ringAt = Number.POSITIVE_INFINITY;
    this.onRing();
  }
}
