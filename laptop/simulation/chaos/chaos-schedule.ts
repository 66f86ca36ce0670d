import type { RandomSource } from "../../../src/domain/backoff.js";

export interface ChaosSchedule {
  /** Seconds from the first order at which the host is killed, ascending, each with its downtime. */
  readonly kills: ReadonlyArray<{ readonly at: number; readonly downSeconds: number }>;
  /** Seconds from the first order at which the partner goes down, ascending. */
  readonly outages: readonly number[];
}

/**
 * When the faults strike, drawn from the seed. Kills fall anywhere from the start of sending to 10 s
 * after it, so some land during submission and some while the backlog is processed and compensated;
 * later, a host that keeps up would be idle. Outages fall while orders are being sent.
 */
export function chaosSchedule(
  options: {
    readonly orders: number;
    readonly rate: number;
    readonly kills: number;
    readonly partnerOutages: number;
    readonly upgrade?: boolean;
  },
  random: RandomSource,
): ChaosSchedule {
  const sending = options.orders / options.rate;
  const until = sending + 10;
  const times = (count: number, end: number) =>
    Array.from({ length: count }, () => round(1 + random() * Math.max(0, end - 1))).sort((a, b) => a - b);
  const killTimes = times(options.kills, until);
  // The upgrade's kill falls in the first third of the sending, so both versions accept orders.
  if (options.upgrade && killTimes.length > 0)
    killTimes[0] = Math.min(killTimes[0] ?? 1, firstThird(sending));
  return {
    kills: killTimes.map((at) => ({ at, downSeconds: round(0.2 + random() * 1.8) })),
    outages: times(options.partnerOutages, Math.max(2, sending)),
  };
}

/** The latest moment the upgrade's kill may strike at: a third of the way through the sending, not before 1 s. */
export function firstThird(sendingSeconds: number): number {
  return round(Math.max(1, sendingSeconds / 3));
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
