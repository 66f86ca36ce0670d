import type { Clock } from "../src/ports/clock.js";
import type { Logger } from "../src/ports/logger.js";
import {
  type ControlChange,
  OUTAGE_MAX_SECONDS,
  type PartnerControlState,
  type PartnerOutage,
} from "./control-contract.js";
import { FAULT_KINDS, type PartnerFaults, resolveFaults } from "./faults.js";
import type { Ledger } from "./ledger.js";

/** What the control operations read and change of a running partner. */
export interface ControlHost {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly seed: number;
  readonly slowMs: number;
  /** The fault rates of the next call. */
  faults: PartnerFaults;
}

export function controlState(host: ControlHost): PartnerControlState {
  return {
    faults: { ...host.faults },
    outage: currentOutage(host),
    seed: host.seed,
    slowMs: host.slowMs,
    changes: host.ledger.control.changes(),
  };
}

export function currentOutage(host: ControlHost): PartnerOutage | null {
  return host.ledger.control.outageAt(host.clock.now());
}

/**
 * Journals the start-up rates as a change `by: "settings"` when they are not the last rates in the
 * books (a new ledger has none), so the books always say which rates were in force.
 */
export function adoptStartRates(host: ControlHost): void {
  const last = host.ledger.control.lastFaults();
  if (last && sameRates(last, host.faults)) return;
  record(host, {
    at: host.clock.now().toISOString(),
    change: "faults",
    by: "settings",
    faults: { ...host.faults },
  });
}

/**
 * Merges `input` over the current rates and takes them if the whole is valid (a RangeError names the
 * rate otherwise); a change is journaled only when a rate differs.
 */
export function mergeFaults(host: ControlHost, input: Readonly<Record<string, unknown>>): void {
  replaceFaults(host, resolveFaults({ ...host.faults, ...input } as Partial<PartnerFaults>));
}

/** Takes `faults` (already valid) as the operator's; journaled only when a rate differs. */
export function replaceFaults(host: ControlHost, faults: PartnerFaults): void {
  if (sameRates(host.faults, faults)) return;
  host.faults = { ...faults };
  record(host, {
    at: host.clock.now().toISOString(),
    change: "faults",
    by: "operator",
    faults: { ...faults },
  });
}

/** Down from now until `seconds` from now, replacing the end of an outage already running. */
export function startOutage(host: ControlHost, seconds: unknown): void {
  const length = outageSeconds(seconds);
  const now = host.clock.now();
  const until = new Date(now.getTime() + length * 1000).toISOString();
  record(host, { at: now.toISOString(), change: "outage", by: "operator", until });
}

/** Ends a running outage now; nothing happens (and nothing is journaled) when none is running. */
export function endOutage(host: ControlHost): void {
  if (!currentOutage(host)) return;
  record(host, { at: host.clock.now().toISOString(), change: "recovered", by: "operator" });
}

/** Seconds of an outage: a whole number from 1 to a day; a RangeError names what is wrong. */
export function outageSeconds(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > OUTAGE_MAX_SECONDS) {
    throw new RangeError(
      `seconds must be a whole number from 1 to ${OUTAGE_MAX_SECONDS}, got ${JSON.stringify(value) ?? "nothing"}`,
    );
  }
  return value;
}

function record(host: ControlHost, change: ControlChange): void {
  host.ledger.recordControl(change);
  host.logger.info("partner.control", { ...change });
}

function sameRates(a: PartnerFaults, b: PartnerFaults): boolean {
  return FAULT_KINDS.every((kind) => a[kind] === b[kind]);
}
