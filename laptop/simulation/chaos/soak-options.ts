import type { RunOptions } from "./chaos-options.js";

export interface SoakOptions extends RunOptions {
  readonly minutes: number;
  readonly intervalSeconds: number;
  /** RSS at the end of this is the baseline; later readings may exceed it by at most `RSS_GROWTH_LIMIT`. */
  readonly warmupMinutes: number;
}
