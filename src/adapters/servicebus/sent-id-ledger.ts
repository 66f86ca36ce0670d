import type { Clock } from "../../ports/clock.js";

/**
 * The message ids one sender got accepted inside the queue's duplicate-detection window. Service Bus
 * drops a duplicate without telling the sender, so this is all a sender can know of duplicates: its
 * own repeats. A duplicate of another sender's message is counted as accepted.
 */
export class SentIdLedger {
  /** Id → when it was sent; insertion order is time order, so the oldest come first. */
  private readonly sentAt = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly clock: Clock,
    private readonly capacity = 10_000,
  ) {}

  /** Counts the ids the broker will drop: sent inside the window, or repeated within `ids`. */
  countDuplicates(ids: readonly string[]): number {
    this.forgetBefore(this.clock.now().getTime() - this.windowMs);
    const seen = new Set<string>();
    let duplicates = 0;
    for (const id of ids) {
      if (seen.has(id) || this.sentAt.has(id)) duplicates++;
      seen.add(id);
    }
    return duplicates;
  }

  /** Records ids the broker has accepted (new ones, or repeats it dropped) as sent at `at`. */
  record(ids: readonly string[], at: number): void {
    for (const id of ids) {
      if (this.sentAt.has(id)) continue;
      this.sentAt.set(id, at);
      if (this.sentAt.size > this.capacity) this.forgetOldest();
    }
  }

  private forgetBefore(cutoff: number): void {
    for (const [id, at] of this.sentAt) {
      if (at > cutoff) return;
      this.sentAt.delete(id);
    }
  }

  private forgetOldest(): void {
    const oldest = this.sentAt.keys().next();
    if (!oldest.done) this.sentAt.delete(oldest.value);
  }
}
