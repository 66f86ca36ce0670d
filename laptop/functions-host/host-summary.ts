import { PROCESS_STATES } from "../../src/domain/state-record.js";
import { createStatusLine, endStatusLine, type LineSink } from "../embedded/status-line.js";

/** How often the summary reads the counts: each second on a terminal, less often into a file. */
export const SUMMARY_INTERVAL_MS = { terminal: 1_000, piped: 5_000 } as const;

export interface HostSummaryOptions {
  /** The functions' base URL (`http://host:port`). */
  readonly url: string;
  readonly functionKey: string;
  readonly out: LineSink;
  readonly fetch?: typeof fetch;
}

export interface HostSummary {
  /** Reads the counts once and shows them (a test's step; the timer calls it too). */
  update(): Promise<void>;
  /** Stops reading, once the reading under way (if any) is shown, and ends the live line. */
  stop(): Promise<void>;
}

/**
 * The orders in each of the seven states, from the app's own `GET /api/stats`: one line rewritten in
 * place on a terminal, a plain line for each change elsewhere (read every SUMMARY_INTERVAL_MS.piped,
 * so a batch of hundreds of orders prints tens of lines, not hundreds).
 */
export function startHostSummary(options: HostSummaryOptions): HostSummary {
  const show = createStatusLine(options.out);
  const read = options.fetch ?? fetch;
  let reading: Promise<void> | undefined;
  const update = () => {
    reading ??= readSummary(read, options)
      .then(show)
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const every = options.out.isTTY ? SUMMARY_INTERVAL_MS.terminal : SUMMARY_INTERVAL_MS.piped;
  const timer = setInterval(() => void update(), every);
  timer.unref();
  void update();
  return {
    update,
    stop: async () => {
      clearInterval(timer);
      await reading;
      endStatusLine(options.out);
    },
  };
}

async function readSummary(read: typeof fetch, options: HostSummaryOptions): Promise<string> {
  try {
    const response = await read(`${options.url}/api/stats`, {
      headers: { "x-functions-key": options.functionKey },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) return `orders: GET /api/stats answered ${response.status}`;
    const stats = (await response.json()) as { counts?: Record<string, number> };
    return describeCounts(stats.counts ?? {});
  } catch (error) {
    return `orders: GET /api/stats failed (${(error as Error).message})`;
  }
}

/** The seven states' counts, those with orders in them, in the states' order. */
export function describeCounts(counts: Readonly<Record<string, number>>): string {
  const parts = PROCESS_STATES.filter((state) => (counts[state] ?? 0) > 0).map(
    (state) => `${state} ${counts[state]}`,
  );
  return `orders: ${parts.length > 0 ? parts.join(" · ") : "none yet"}`;
}
