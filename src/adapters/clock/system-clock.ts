import { setTimeout as delay } from "node:timers/promises";
import type { Clock } from "../../ports/clock.js";

export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (ms > 0) await delay(ms, undefined, signal ? { signal } : {});
  }
}
