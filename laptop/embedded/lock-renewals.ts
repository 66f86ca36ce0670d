import type { Clock } from "../../src/ports/clock.js";
import { ClockAlarm } from "./clock-alarm.js";

/**
 * Renews something `intervalMs` after it began and after each renewal ended. `renew` resolves true
 * to go on renewing, false to stop.
 */
type Renew<T> = (subject: T) => Promise<boolean>;

/** One subject being renewed. */
export interface Renewal {
  readonly ended: boolean;
}

interface Entry<T> extends Renewal {
  readonly subject: T;
  dueAt: number;
  ended: boolean;
  /** The renewal under way, if one is. */
  running: Promise<void> | undefined;
}

const NOTHING_RUNNING = Promise.resolve();

/**
 * The lock renewals of the messages being handled, on one alarm for all of them: a message costs no
 * sleep of its own, so beginning and ending one costs no abort (see `ClockAlarm`).
 */
export class LockRenewals<T> {
  /** Entries waiting for their next renewal. */
  private readonly waiting = new Set<Entry<T>>();
  private readonly alarm: ClockAlarm;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly renew: Renew<T>,
  ) {
    this.alarm = new ClockAlarm(clock, () => this.renewDue());
  }

  begin(subject: T): Renewal {
    const entry: Entry<T> = { subject, dueAt: 0, ended: false, running: undefined };
    this.schedule(entry);
    return entry;
  }

  /** Stops renewing; resolves once a renewal under way, if any, has ended. */
  end(renewal: Renewal): Promise<void> {
    const entry = renewal as Entry<T>;
    entry.ended = true;
    this.waiting.delete(entry);
    return entry.running ?? NOTHING_RUNNING;
  }

  /** Renews nothing more and leaves no sleep on the clock: call once every renewal has ended. */
  close(): void {
    this.alarm.close();
  }

  private schedule(entry: Entry<T>): void {
    entry.dueAt = this.clock.now().getTime() + this.intervalMs;
    this.waiting.add(entry);
    this.alarm.ringBy(entry.dueAt);
  }

  private renewDue(): void {
    const now = this.clock.now().getTime();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.waiting) {
      if (entry.dueAt > now) {
        next = Math.min(next, entry.dueAt);
        continue;
      }
      this.waiting.delete(entry);
      entry.running = this.renew(entry.subject).then((goOn) => {
        entry.running = undefined;
        if (goOn && !entry.ended) this.schedule(entry);
      });
    }
    if (next !== Number.POSITIVE_INFINITY) this.alarm.ringBy(next);
  }
}
