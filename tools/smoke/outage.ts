import type { OutageOptions } from "./options.js";

/** Each call may take this long before it counts as failed. */
const REQUEST_TIMEOUT_MS = 15_000;

/** A running outage as the partner reports it (`GET /api/partner`'s `outage`). */
export interface PartnerOutage {
  readonly since: string;
  readonly until: string;
}

/** What the run's outage came to. */
export interface OutageReport {
  readonly seconds: number;
  /** The orders placed when the partner was taken down. */
  readonly afterPlaced: number;
  /** When the partner was taken down and until when, as it answered; null when it was not. */
  readonly down: PartnerOutage | null;
  /** When the partner was read back up (this machine's clock); null when it was not. */
  readonly backAt: string | null;
  /** The orders whose final state was first read after the partner was back. */
  readonly finishedAfter: number;
  /** Why the partner could not be taken down, or was not read back up. */
  readonly problem: string | null;
}

/**
 * The operator API's partner controls (`/api/partner`), as the operator's CLI and dashboard use them:
 * reads with the key, changes with the admin key or the embedded host's API token.
 */
export class PartnerControls {
  constructor(private readonly options: OutageOptions) {}

  /** Takes the partner down for `seconds`; the outage it then reports. */
  async takeDown(seconds: number): Promise<PartnerOutage> {
    const outage = outageOf(await this.json("POST", "/api/partner/outage", { seconds }));
    if (outage === null) throw new Error("POST /api/partner/outage: the answer shows no outage");
    return outage;
  }

  /** The outage the partner reports now, or null when it is up. */
  async outage(): Promise<PartnerOutage | null> {
    return outageOf(await this.json("GET", "/api/partner"));
  }

  private async json(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.options.key !== undefined) headers["x-functions-key"] = this.options.key;
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    const response = await fetch(`${this.options.api}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text) as unknown;
    } catch {
      throw new Error(`${method} ${path}: ${response.status}, an answer that is not JSON`);
    }
    if (response.status !== 200) throw new Error(`${method} ${path}: ${refusal(response.status, answer)}`);
    return answer;
  }
}

function refusal(status: number, answer: unknown): string {
  const { error, message } = (answer ?? {}) as { error?: unknown; message?: unknown };
  const reason = [error, message].filter((part) => typeof part === "string" && part !== "").join(": ");
  return reason ? `${status} ${reason}` : String(status);
}

function outageOf(state: unknown): PartnerOutage | null {
  const outage = (state as { outage?: unknown } | null)?.outage;
  if (outage === undefined) throw new Error("the partner's state has no outage field");
  if (outage === null) return null;
  const { since, until } = outage as { since?: unknown; until?: unknown };
  if (typeof since !== "string" || typeof until !== "string") {
    throw new Error("the partner's outage has no since and until");
  }
  return { since, until };
}

/**
 * One run's outage: asked for once a third of the orders are placed (`start`), then read back over
 * once it is due, while the orders are followed (`confirmOver`). A refusal is kept as the report's
 * problem, which fails the run, rather than thrown: the orders already placed are still followed.
 */
export class RunOutage {
  private readonly controls: PartnerControls;
  private asked: Promise<void> | undefined;
  private afterPlaced = 0;
  private down: PartnerOutage | null = null;
  /** When the partner is due back, on this process's performance clock. */
  private dueAt: number | undefined;
  private backAt: string | null = null;
  private problem: string | null = null;

  constructor(
    private readonly options: OutageOptions,
    private readonly progress: (line: string) => void,
  ) {
    this.controls = new PartnerControls(options);
  }

  /** Takes the partner down, once; what was placed by then is reported. */
  start(placed: number, requested: number): void {
    if (this.asked) return;
    this.afterPlaced = placed;
    const askedAt = performance.now();
    this.asked = this.controls.takeDown(this.options.seconds).then(
      (down) => {
        this.down = down;
        this.dueAt = askedAt + this.options.seconds * 1000;
        this.progress(
          `smoke: took the partner down for ${this.options.seconds} s after ${placed} of ${requested} orders were placed (since ${down.since}, until ${down.until})`,
        );
      },
      (error: unknown) => {
        this.problem = `the partner could not be taken down: ${messageOf(error)}`;
        this.progress(`smoke: ${this.problem}`);
      },
    );
  }

  /**
   * Waits until the partner is due back (not past `deadline`), then reads it: up, or the run fails.
   * Read more than once since the partner's clock and this one may differ by a little.
   */
  async confirmOver(deadline: number, pollIntervalMs: number): Promise<void> {
    await this.asked;
    if (this.dueAt === undefined) return;
    await sleep(Math.max(0, Math.min(this.dueAt, deadline) - performance.now()));
    for (;;) {
      let outage: PartnerOutage | null | undefined;
      try {
        outage = await this.controls.outage();
      } catch (error) {
        this.problem = `the partner could not be read after its outage: ${messageOf(error)}`;
      }
      if (outage === null) {
        this.backAt = new Date().toISOString();
        this.problem = null;
        return;
      }
      if (outage !== undefined) this.problem = `the partner still reports an outage until ${outage.until}`;
      const remaining = deadline - performance.now();
      if (remaining <= 0) return;
      await sleep(Math.min(pollIntervalMs, remaining));
    }
  }

  report(finalReadAt: ReadonlyMap<string, number>): OutageReport {
    if (this.asked === undefined) this.problem = "the partner was not taken down: no order was placed";
    const due = this.dueAt;
    const finishedAfter =
      due === undefined || this.backAt === null
        ? 0
        : [...finalReadAt.values()].filter((at) => at >= due).length;
    return {
      seconds: this.options.seconds,
      afterPlaced: this.afterPlaced,
      down: this.down,
      backAt: this.backAt,
      finishedAfter,
      problem: this.problem,
    };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
