import type { LogFields, Logger } from "../../ports/logger.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LogLine {
  readonly time: string;
  readonly level: LogLevel;
  readonly event: string;
  readonly [field: string]: unknown;
}

/** Writes one JSON object per line: `{ time, level, event, ...fields }`. Errors become `{ name, message }`. */
export class JsonLogger implements Logger {
  constructor(
    private readonly write: (line: LogLine) => void,
    private readonly minimum: LogLevel = "info",
    private readonly base: LogFields = {},
    private readonly now: () => Date = () => new Date(),
  ) {}

  static toStream(stream: NodeJS.WritableStream, minimum: LogLevel = "info"): JsonLogger {
    return new JsonLogger((line) => stream.write(`${JSON.stringify(line)}\n`), minimum);
  }

  debug(event: string, fields?: LogFields): void {
    this.log("debug", event, fields);
  }
  info(event: string, fields?: LogFields): void {
    this.log("info", event, fields);
  }
  warn(event: string, fields?: LogFields): void {
    this.log("warn", event, fields);
  }
  error(event: string, fields?: LogFields): void {
    this.log("error", event, fields);
  }

  child(fields: LogFields): Logger {
    return new JsonLogger(this.write, this.minimum, { ...this.base, ...fields }, this.now);
  }

  private log(level: LogLevel, event: string, fields: LogFields = {}): void {
    if (RANK[level] < RANK[this.minimum]) return;
    const line: Record<string, unknown> = { time: this.now().toISOString(), level, event, ...this.base };
    for (const [key, value] of Object.entries(fields)) line[key] = serializable(value);
    this.write(line as LogLine);
  }
}

function serializable(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** Keeps lines in memory: for tests that assert what was logged. */
export class MemoryLogger extends JsonLogger {
  readonly lines: LogLine[];

  constructor(minimum: LogLevel = "debug") {
    const lines: LogLine[] = [];
    super((line) => lines.push(line), minimum);
    this.lines = lines;
  }

  events(event: string): LogLine[] {
    return this.lines.filter((line) => line.event === event);
  }
}
