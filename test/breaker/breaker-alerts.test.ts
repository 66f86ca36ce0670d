import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { breakerAlertOf } from "../../src/breaker/breaker-alerts.js";
import type { BreakerChange } from "../../src/breaker/breaker-change.js";
import { type BreakerDecision, SharedBreaker } from "../../src/breaker/shared-breaker.js";
import {
  type BreakerOutcome,
  type BreakerPolicy,
  CLOSED_BREAKER,
  openingOf,
  record,
} from "../../src/domain/circuit-breaker.js";
import { MemoryBreakerStore } from "../support/memory-breaker-store.js";

const T0 = "2026-01-01T00:00:00.000Z";
const OP = "chargePayment";
const base: BreakerPolicy = {
  failureRun: 3,
  failureRate: 0.5,
  minCalls: 20,
  windowMs: 10_000,
  openMs: 1_000,
  maxOpenMs: 8_000,
  probeLeaseMs: 2_000,
};

/** One shared breaker on a standing virtual clock, its changes kept. */
function breakerWith(policy: BreakerPolicy) {
  const clock = new VirtualClock(T0);
  const changes: BreakerChange[] = [];
  const breaker = new SharedBreaker({
    store: new MemoryBreakerStore(),
    clock,
    logger: new MemoryLogger(),
    policy,
    onTransition: (change) => changes.push(change),
  });
  const call = async (outcome: BreakerOutcome) => {
    const decision: BreakerDecision = await breaker.admit(OP);
    if (decision.decision === "defer") throw new Error(`deferred until ${decision.until.toISOString()}`);
    await breaker.record(decision.ticket, outcome);
  };
  return { clock, changes, call, breaker };
}

describe("breakerAlertOf", () => {
  it("raises BreakerOpened for a run of failures, naming the operation, the run and the next probe", async () => {
    const { changes, call } = breakerWith(base);
    for (let i = 0; i < 3; i++) await call("transient");

    expect(changes.map((c) => c.transition)).toEqual(["opened"]);
    expect(changes[0]?.opening).toMatchObject({ cause: "run", consecutiveFailures: 3 });
    expect(breakerAlertOf(changes[0] as BreakerChange, base.openMs)).toEqual({
      kind: "BreakerOpened",
      orderId: null,
      reason:
        "the circuit breaker of partner operation chargePayment opened after 3 consecutive transient " +
        "failures; no call to chargePayment before 2026-01-01T00:00:01.000Z, then one probe",
      at: T0,
    });
  });

  it("names the rate, counted with the answered calls written together with the failure that opened it", async () => {
    const { changes, call } = breakerWith({ ...base, failureRun: 100, minCalls: 4 });
    await call("transient"); // stored: 1 call, 1 failure
    await call("succeeded"); // written at once: the breaker has a failure to weigh
    await call("permanent"); // an answer too, kept back until the next write (the clock stands still)
    await call("transient"); // 2 of 4 failed: the rate is reached, the run (1) is not

    expect(changes[0]?.opening).toEqual({
      cause: "rate",
      consecutiveFailures: 1,
      windowCalls: 4,
      windowFailures: 2,
      windowMs: 10_000,
    });
    expect(breakerAlertOf(changes[0] as BreakerChange, base.openMs)?.reason).toBe(
      "the circuit breaker of partner operation chargePayment opened: 2 of 4 calls in the last 10 s " +
        "failed transiently; no call to chargePayment before 2026-01-01T00:00:01.000Z, then one probe",
    );
  });

  it("F24-4: raises BreakerProbeFailed for the first failed probe of an opening, BreakerClosed when a probe answers; none for a probe or a later failed one", async () => {
    const { clock, changes, call } = breakerWith(base);
    for (let i = 0; i < 3; i++) await call("transient");
    await clock.advance(1_000);
    await call("transient"); // the probe fails: open again, for 2 s
    await clock.advance(2_000);
    await call("transient"); // the second probe fails too: open for 4 s
    await clock.advance(4_000);
    await call("succeeded"); // this probe answers

    expect(changes.map((c) => c.transition)).toEqual([
      "opened",
      "half-opened",
      "reopened",
      "half-opened",
      "reopened",
      "half-opened",
      "closed",
    ]);
    const alerts = changes.map((change) => breakerAlertOf(change, base.openMs));
    expect(alerts.map((a) => a?.kind)).toEqual([
      "BreakerOpened",
      undefined,
      "BreakerProbeFailed",
      undefined,
      undefined,
      undefined,
      "BreakerClosed",
    ]);
    expect(alerts[2]).toEqual({
      kind: "BreakerProbeFailed",
      orderId: null,
      reason:
        "the first probe of partner operation chargePayment failed: it is still unavailable since " +
        "2026-01-01T00:00:00.000Z; next probe at 2026-01-01T00:00:03.000Z",
      at: "2026-01-01T00:00:01.000Z",
    });
    expect(alerts[6]).toEqual({
      kind: "BreakerClosed",
      orderId: null,
      reason:
        "the circuit breaker of partner operation chargePayment closed: a probe was answered, after it " +
        "had been open since 2026-01-01T00:00:00.000Z; calls to it go through again",
      at: "2026-01-01T00:00:07.000Z",
    });
  });
});

describe("openingOf", () => {
  it("agrees with record: a cause exactly when a failure opens the breaker", () => {
    const policy = { ...base, minCalls: 4 };
    const now = Date.parse(T0);
    let state = CLOSED_BREAKER as Parameters<typeof record>[0];
    const outcomes: BreakerOutcome[] = ["transient", "succeeded", "transient", "succeeded", "transient"];
    const seen: (string | undefined)[] = [];
    for (const outcome of outcomes) {
      const counts = {
        buckets: [{ start: now, calls: 1, failures: outcome === "transient" ? 1 : 0 }],
        lastFailureAt: outcome === "transient" ? now : null,
        run: outcome === "transient" && state.status === "closed" ? state.consecutiveFailures + 1 : 0,
      };
      const opening = openingOf(state, counts, now, policy);
      state = record(state, outcome, now, "holder", policy);
      seen.push(opening?.cause);
      expect(opening !== undefined).toBe(outcome === "transient" && state.status === "open");
      if (state.status === "open") break;
    }
    // The fifth call makes 5 calls of which 3 failed: the rate opens it, the run of 1 would not.
    expect(seen).toEqual([undefined, undefined, undefined, undefined, "rate"]);
    const failure = { buckets: [{ start: now, calls: 1, failures: 1 }], lastFailureAt: now, run: 1 };
    expect(openingOf(state, failure, now, policy)).toBeUndefined(); // an open breaker does not open again
  });
});
