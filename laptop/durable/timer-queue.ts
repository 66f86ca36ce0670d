import type { Clock } from "../../src/ports/clock.js";

interface Entry<T> {
  readonly item: T;
  readonly fireAt: number;
  readonly sequence: number;
}

/**
 * Durable timers of every instance behind one sleep on the clock: a heap ordered by due time, and a
 * single sleep until the earliest. Thousands of timers armed at once cost a heap entry each, not a
 * pending sleep and an abort listener each. Timers due at the same moment are handed over together,
 * in the order they were added.
 */
export class TimerQueue<T> {
  private readonly heap: Entry<T>[] = [];
  private sequence = 0;
  private sleeping: { readonly wakeAt: number; readonly abort: AbortController } | undefined;
  private closed = false;

  /**
   * `onDue` gets the timers due together. If it throws, they are handed over again `retryMs` later
   * and `onError` hears of it; the timers behind them are not held up.
   */
  constructor(
    private readonly clock: Clock,
    private readonly onDue: (items: T[]) => void,
    private readonly onError: (error: unknown, items: readonly T[]) => void = () => undefined,
    private readonly retryMs = 100,
  ) {}

  get size(): number {
    return this.heap.length;
  }

  add(item: T, fireAt: number): void {
    if (this.closed) return;
    this.push({ item, fireAt, sequence: this.sequence++ });
    this.arm();
  }

  /** Drops every timer and the pending sleep; nothing is handed over after this. */
  close(): void {
    this.closed = true;
    this.heap.length = 0;
    this.sleeping?.abort.abort(new Error("timer queue closed"));
    this.sleeping = undefined;
  }

  private arm(): void {
    const earliest = this.heap[0];
    if (this.closed || !earliest) return;
    if (this.sleeping && this.sleeping.wakeAt <= earliest.fireAt) return;
    this.sleeping?.abort.abort(new Error("an earlier timer was added"));
    const sleep = { wakeAt: earliest.fireAt, abort: new AbortController() };
    this.sleeping = sleep;
    this.clock.sleep(Math.max(0, earliest.fireAt - this.clock.now().getTime()), sleep.abort.signal).then(
      () => {
        if (this.sleeping !== sleep) return;
        this.sleeping = undefined;
        this.handOverDue();
      },
      () => undefined, // replaced by an earlier sleep, or closed
    );
  }

  private handOverDue(): void {
    const now = this.clock.now().getTime();
    const due: T[] = [];
    for (let first = this.heap[0]; first && first.fireAt <= now; first = this.heap[0]) {
      due.push(first.item);
      this.pop();
    }
    try {
      if (due.length > 0) this.onDue(due);
    } catch (error) {
      for (const item of due) this.push({ item, fireAt: now + this.retryMs, sequence: this.sequence++ });
      this.onError(error, due);
    } finally {
      this.arm();
    }
  }

  private push(entry: Entry<T>): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(entry, heap[parent] as Entry<T>)) break;
      heap[i] = heap[parent] as Entry<T>;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && before(heap[right] as Entry<T>, heap[left] as Entry<T>) ? right : left;
      if (!before(heap[child] as Entry<T>, last)) break;
      heap[i] = heap[child] as Entry<T>;
      i = child;
    }
    heap[i] = last;
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.fireAt < b.fireAt || (a.fireAt === b.fireAt && a.sequence < b.sequence);
}
