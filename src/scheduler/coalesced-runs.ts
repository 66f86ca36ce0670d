/**
 * Runs `run` at most once at a time: a trigger during a run asks for exactly one more run after it,
 * however many triggers arrive; that run gets the argument of the latest trigger. The starter is
 * driven this way, by its timer and by nudges, each passing the durable client of its own invocation.
 */
export class CoalescedRuns<Arg = void> {
  private current: Promise<void> | undefined;
  private again: { readonly arg: Arg } | undefined;

  constructor(
    private readonly run: (arg: Arg) => Promise<unknown>,
    /** Checked before each repeat: no more runs once it answers true. */
    private readonly stopped: () => boolean = () => false,
  ) {}

  /** Starts a run, or asks for one more; resolves when the runs in progress end (rejects if one throws). */
  trigger(arg: Arg): Promise<void> {
    if (this.current) {
      this.again = { arg };
      return this.current;
    }
    this.current = (async () => {
      let next: { readonly arg: Arg } | undefined = { arg };
      while (next) {
        this.again = undefined;
        await this.run(next.arg);
        next = this.stopped() ? undefined : this.again;
      }
    })().finally(() => {
      this.current = undefined;
      this.again = undefined;
    });
    return this.current;
  }

  /** The runs in progress, if any. */
  get running(): Promise<void> | undefined {
    return this.current;
  }
}
