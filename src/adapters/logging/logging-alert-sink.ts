import type { AlertSink, OperatorAlert } from "../../ports/alerts.js";
import type { Logger } from "../../ports/logger.js";

/** Alerts as `operator.alert` error records (what alert rules watch), also kept for the terminal and tests. */
export class LoggingAlertSink implements AlertSink {
  readonly raised: OperatorAlert[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly keep = 1_000,
  ) {}

  async raise(alert: OperatorAlert): Promise<void> {
    this.logger.error("operator.alert", { ...alert });
    this.raised.push(alert);
    if (this.raised.length > this.keep) this.raised.shift();
  }
}
