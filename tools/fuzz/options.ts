/** The fuzzer's command line: `npm run fuzz -- [--runs <n>] [--seed <n>] [--json]`. */
export interface FuzzOptions {
  readonly runs: number;
  readonly seed: number;
  readonly json: boolean;
}

export const USAGE = `usage: npm run fuzz -- [--runs <n>] [--seed <n>] [--json]

  --runs <n>   inputs per target, 1 to 1000000 (default 1000)
  --seed <n>   fast-check seed, an integer (default: random, printed so a failure can be replayed)
  --json       print one JSON object instead of the text summary

Exit status: 0 when no property broke, 1 on a violation (its shrunk counterexample is printed),
2 on a bad command line.`;

export class UsageError extends Error {
  override readonly name = "UsageError";
}

const DEFAULT_RUNS = 1_000;
const MAX_RUNS = 1_000_000;

/** Parses the flags; `randomSeed` is used when no `--seed` is given. Throws a UsageError naming the problem. */
export function parseFuzzOptions(args: readonly string[], randomSeed: () => number): FuzzOptions {
  let runs = DEFAULT_RUNS;
  let seed: number | undefined;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    if (flag === "--json") {
      json = true;
      continue;
    }
    if (flag !== "--runs" && flag !== "--seed")
      throw new UsageError(`unknown argument ${JSON.stringify(flag)}`);
    const value = args[++i];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === "--runs") runs = integerIn(flag, value, 1, MAX_RUNS);
    else seed = integerIn(flag, value, -(2 ** 31), 2 ** 31 - 1);
  }
  return { runs, seed: seed ?? randomSeed(), json };
}

function integerIn(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || value < min || value > max) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}; got ${JSON.stringify(text)}`);
  }
  return value;
}
