/** Time as the handlers see it. The embedded host uses the system clock; tests use a virtual one. */
export interface Clock {
  now(): Date;
  /** Resolves once `ms` have passed on this clock; rejects with the signal's reason if it is aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
