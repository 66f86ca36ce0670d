/**
 * Structured logging: an event name and the fields that say which order, attempt and step it concerns.
 * Adapters decide where the lines go (JSON lines locally, Application Insights under the Functions host).
 */
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}
