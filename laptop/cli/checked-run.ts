/**
 * Runs a check (a chaos run, a soak) with its progress on stderr, prints its summary (pretty, or one
 * JSON line with --json), and gives exit status 1 unless it is ok.
 */
export async function runChecked<Options extends { readonly json: boolean }>(
  options: Options,
  run: (options: Options, progress: (line: string) => void) => Promise<{ readonly ok: boolean }>,
): Promise<number> {
  const summary = await run(options, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${JSON.stringify(summary, null, options.json ? undefined : 2)}\n`);
  return summary.ok ? 0 : 1;
}
