import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { Writable } from "node:stream";
import { JsonLogger, type LogLevel } from "../../src/adapters/logging/json-logger.js";

/** The levels `--log-level` takes, lowest first. */
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/**
 * Where sas host's log goes: every JSON line (the host's, the app's console, the extension host's) to
 * a file, and those at `echo` or above to the terminal too. Without `echo`, the terminal gets none.
 */
export interface HostLog {
  readonly path: string;
  /** The host's own logger, at info, or at debug when debug lines are to be shown. */
  readonly logger: JsonLogger;
  /** A stream of lines (the extension host's log, the app's console), routed as the logger's are. */
  readonly stream: NodeJS.WritableStream;
  close(): void;
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * Opens (appending) the log file at `path`; lines are written at once, so none is lost when the
 * process ends right after a failure.
 */
export function openHostLog(
  path: string,
  echo: LogLevel | undefined,
  terminal: { write(text: string): unknown },
): HostLog {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, "a");
  const shown = echo === undefined ? Number.POSITIVE_INFINITY : LOG_LEVELS.indexOf(echo);
  const line = (text: string) => {
    if (text === "") return;
    writeSync(fd, `${text}\n`);
    if (levelOf(text) >= shown) terminal.write(`${text}\n`);
  };
  let partial = "";
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, done) {
      const lines = `${partial}${chunk.toString()}`.split("\n");
      partial = lines.pop() ?? "";
      for (const text of lines) line(text);
      done();
    },
  });
  return {
    path,
    logger: new JsonLogger((entry) => line(JSON.stringify(entry)), echo === "debug" ? "debug" : "info"),
    stream,
    close: () => {
      line(partial);
      partial = "";
      closeSync(fd);
    },
  };
}

/** A JSON line's level's rank; a line that is not a log line ranks as info. */
function levelOf(text: string): number {
  const info = LOG_LEVELS.indexOf("info");
  if (!text.startsWith("{")) return info;
  const level = /"level":"(\w+)"/.exec(text)?.[1] ?? "";
  return isLogLevel(level) ? LOG_LEVELS.indexOf(level) : info;
}
