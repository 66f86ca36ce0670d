/**
 * Entry of the worker thread that runs the simulated partner for the embedded host (see
 * partner-thread.ts): the same service, on real time, with its log lines sent to the host in batches.
 */
import { parentPort, workerData } from "node:worker_threads";
import { type PartnerControlState, startPartnerService } from "../../../partner/partner-service.js";
import { SystemClock } from "../../../src/adapters/clock/system-clock.js";
import { JsonLogger, type LogLine } from "../../../src/adapters/logging/json-logger.js";
import type { PartnerThreadRequest, PartnerWorkerData, PartnerWorkerMessage } from "./partner-thread.js";

const LOG_BATCH_MS = 50;
const LOG_BATCH_LINES = 1_000;

const port = parentPort;
if (!port) throw new Error("partner-worker.ts runs only as a worker thread");
const data = workerData as PartnerWorkerData;
const send = (message: PartnerWorkerMessage) => port.postMessage(message);

let lines: LogLine[] = [];
const flush = () => {
  if (lines.length === 0) return;
  send({ type: "log", lines });
  lines = [];
};
const logger = new JsonLogger((line) => {
  lines.push(line);
  if (lines.length >= LOG_BATCH_LINES) flush();
}, data.logLevel);
setInterval(flush, LOG_BATCH_MS).unref();

const { logLevel: _level, ...serviceOptions } = data;
const partner = await startPartnerService({ ...serviceOptions, clock: new SystemClock(), logger });

port.on("message", (request: PartnerThreadRequest) => {
  switch (request.type) {
    case "ledger":
      send({ type: "ledger", id: request.id, data: partner.ledgerData() });
      return;
    case "setFaults":
      partner.setFaults(request.faults);
      send({ type: "done", id: request.id });
      return;
    case "control":
      send({ type: "control", id: request.id, state: partner.control() });
      return;
    case "changeFaults":
      answerControl(request.id, partner.changeFaults(request.faults));
      return;
    case "startOutage":
      answerControl(request.id, partner.startOutage(request.seconds));
      return;
    case "endOutage":
      answerControl(request.id, partner.endOutage());
      return;
    case "reset":
      partner.reset();
      send({ type: "done", id: request.id });
      return;
    case "close":
      void partner.close().then(() => {
        flush();
        send({ type: "done", id: request.id });
        port.close();
      });
      return;
  }
});
send({ type: "started", url: partner.url });

/** Sends the control state once the change is made, or why it was refused (a wrong rate or outage length). */
function answerControl(id: number, change: Promise<PartnerControlState>): void {
  change.then(
    (state) => send({ type: "control", id, state }),
    (error: unknown) =>
      send(
        error instanceof RangeError
          ? { type: "refused", id, message: error.message }
          : { type: "failed", id, message: String(error) },
      ),
  );
}
