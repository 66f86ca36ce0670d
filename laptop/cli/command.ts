/** One `sas` command: what the command list says of it, its own usage, and how it runs. */
export interface Command {
  readonly name: string;
  /** The command list's lines for it, without indentation. */
  readonly summary: readonly string[];
  /** What `sas <name> --help` prints. */
  readonly usage: string;
  /** The exit status; a `UsageError` (or a flag `parseArgs` refuses) is the caller's to report. */
  run(args: readonly string[]): Promise<number>;
}

/** `--help`: the command's usage on stdout, exit status 0. */
export function showUsage(usage: string): number {
  process.stdout.write(usage);
  return 0;
}

/** Until SIGINT or SIGTERM: how a command that serves is stopped. */
export function untilStopped(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
}
