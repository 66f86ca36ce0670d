import type { Counter, Histogram, Meter } from "@opentelemetry/api";
import { BREAKER_STATE_VALUES, type BreakerStatus } from "../domain/circuit-breaker.js";
import type { Telemetry } from "./telemetry.js";

/**
 * The app's metrics, created once per meter. Durations are in seconds, as OpenTelemetry's semantic
 * conventions ask; attribute names under `sas.` are this app's own.
 *
 *   sas.orders                          gauge    orders per `sas.process_state` (observed by the host)
 *   sas.step.duration                   s        one Agent's work on one step: `sas.step`, `sas.operation`, `sas.outcome`
 *   sas.agent.calls                     {call}   calls to the partner: `sas.step`, `sas.operation`, `sas.outcome`
 *                                                (succeeded, transient, permanent), `error.type`
 *   http.client.request.duration        s        each call, with the HTTP client conventions' attributes
 *   sas.supervisor.scan.duration        s        each Supervisor scan that held the lease
 *   sas.supervisor.scan.request_units   {RU}     what each scan cost the store (zero on SQLite)
 *   sas.supervisor.recoveries           {order}  recoveries arranged: `sas.recovery` (retry, error, compensate, stalled)
 *   sas.messages.dead_lettered          {message} messages a handler refused: `messaging.destination.name`, `sas.reason`
 *   sas.breaker.state                   gauge    each partner operation's circuit breaker as this instance last
 *                                                saw it, 0 closed, 1 half-open, 2 open: `sas.operation`
 */
export interface Instruments {
  readonly stepDuration: Histogram;
  readonly agentCalls: Counter;
  readonly httpClientDuration: Histogram;
  readonly scanDuration: Histogram;
  readonly scanRequestUnits: Histogram;
  readonly recoveries: Counter;
  readonly deadLettered: Counter;
}

const created = new WeakMap<Meter, Instruments>();

export function instrumentsOf(telemetry: Telemetry): Instruments {
  const existing = created.get(telemetry.meter);
  if (existing) return existing;
  const meter = telemetry.meter;
  const instruments: Instruments = {
    stepDuration: meter.createHistogram("sas.step.duration", {
      unit: "s",
      description: "How long an Agent worked on one step request, retries included",
    }),
    agentCalls: meter.createCounter("sas.agent.calls", {
      unit: "{call}",
      description: "Calls the Agents made to the partner service, by outcome",
    }),
    httpClientDuration: meter.createHistogram("http.client.request.duration", {
      unit: "s",
      description: "Duration of HTTP client requests",
    }),
    scanDuration: meter.createHistogram("sas.supervisor.scan.duration", {
      unit: "s",
      description: "How long each Supervisor scan took",
    }),
    scanRequestUnits: meter.createHistogram("sas.supervisor.scan.request_units", {
      unit: "{RU}",
      description: "What each Supervisor scan cost the state store, in request units",
    }),
    recoveries: meter.createCounter("sas.supervisor.recoveries", {
      unit: "{order}",
      description: "Recoveries the Supervisor arranged for expired attempts",
    }),
    deadLettered: meter.createCounter("sas.messages.dead_lettered", {
      unit: "{message}",
      description: "Messages a handler refused and set aside with a reason",
    }),
  };
  created.set(meter, instruments);
  return instruments;
}

/** Registers the `sas.orders` gauge; `read` is asked at each collection (a count query per state). */
export function observeOrderStates(
  telemetry: Telemetry,
  read: () => Promise<Readonly<Record<string, number>>>,
): void {
  const gauge = telemetry.meter.createObservableGauge("sas.orders", {
    unit: "{order}",
    description: "Orders in each process state",
  });
  gauge.addCallback(async (result) => {
    for (const [state, count] of Object.entries(await read())) {
      result.observe(count, { "sas.process_state": state });
    }
  });
}

/**
 * Registers the `sas.breaker.state` gauge: per partner operation (`sas.operation`), its breaker's status
 * as `BREAKER_STATE_VALUES` numbers it. `read` is asked at each collection and must answer from memory
 * (`SharedBreaker.knownStatuses()`), so an export never waits on the breaker store.
 */
export function registerBreakerGauge(
  telemetry: Telemetry,
  read: () => ReadonlyMap<string, BreakerStatus>,
): void {
  const gauge = telemetry.meter.createObservableGauge("sas.breaker.state", {
    unit: "1",
    description: "Each partner operation's circuit breaker: 0 closed, 1 half-open, 2 open",
  });
  gauge.addCallback((result) => {
    for (const [operation, status] of read()) {
      result.observe(BREAKER_STATE_VALUES[status], { "sas.operation": operation });
    }
  });
}
