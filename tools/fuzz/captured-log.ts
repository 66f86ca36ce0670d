import { JsonLogger, type LogLine } from "../../src/adapters/logging/json-logger.js";
import type { Logger } from "../../src/ports/logger.js";

/** Log events that mean a handler or a consumer broke, whatever the input. */
const BREAKAGE = new Set([
  "queue.consumer.failed",
  "queue.message.abandoned",
  "queue.settle.failed",
  "http.internal-error",
  "durable.episode.error",
  "durable.instance.failed",
  "durable.activity.failed",
  "host.invocation.failed",
]);

/** A logger whose lines the fuzzer reads after each step, then forgets. */
export class CapturedLog {
  private lines: LogLine[] = [];
  readonly logger: Logger = new JsonLogger((line) => this.lines.push(line), "info");

  /** The lines logged since the last call. */
  take(): LogLine[] {
    const taken = this.lines;
    this.lines = [];
    return taken;
  }
}

/** The lines among `lines` that report a broken handler or consumer. */
export function breakages(lines: readonly LogLine[]): LogLine[] {
  return lines.filter((line) => BREAKAGE.has(line.event));
}
