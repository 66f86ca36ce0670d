/**
 * Runs `run` at most once at a time: a trigger during a run asks for exactly one more run after it,
 * however many triggers arrive. The starter is driven this way, by its timer and by nudges.
 */
export class CoalescedRuns {
  private current: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly run: () => Promise<unknown>,
    /** Checked before each repeat: no more runs once it answers true. */
    private readonly stopped: () => boolean = () => false,
  ) {}

  /** Starts a run, or asks for one more; resolves when the runs in progress end (rejects if one throws). */
  trigger(): Promise<void> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    this.current = (async () => {
      do {
        this.again = false;
        await this.run();
      } while (this.again && !this.stopped());
    })().finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  /** The runs in progress, if any. */
  get running(): Promise<void> | undefined {
    return this.current;
  }
}
