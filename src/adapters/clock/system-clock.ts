import { setTimeout as delay } from "node:timers/promises";
import type { Clock } from "../../ports/clock.js";

export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }

  async sleep(ms: number): Promise<void> {
    if (ms > 0) await delay(ms);
  }
}
