import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkedBreakerState } from "../../src/domain/breaker-state-schema.js";
import { viewOf } from "../../src/domain/breaker-view.js";
import { bucketWidth } from "../../src/domain/breaker-window.js";
import {
  admit,
  type BreakerOutcome,
  type BreakerPolicy,
  type BreakerState,
  CLOSED_BREAKER,
  type HalfOpenBreaker,
  type OpenBreaker,
  record,
  recordCalls,
  transitionOf,
  windowTotals,
} from "../../src/domain/circuit-breaker.js";
import { ValidationError } from "../../src/domain/validation.js";

const policy: BreakerPolicy = {
  failureRun: 3,
  failureRate: 0.5,
  minCalls: 10,
  windowMs: 10_000,
  openMs: 1_000,
  maxOpenMs: 8_000,
  probeLeaseMs: 2_000,
};
const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** The state after `outcomes`, one per millisecond from `from`. */
function run(
  outcomes: readonly BreakerOutcome[],
  state: BreakerState = CLOSED_BREAKER,
  from = T0,
): BreakerState {
  return outcomes.reduce((s, outcome, i) => record(s, outcome, from + i, "caller", policy), state);
}

/** `length` outcomes repeating `cycle`. */
function pattern(length: number, cycle: readonly BreakerOutcome[]): BreakerOutcome[] {
  return Array.from({ length }, (_, i) => cycle[i % cycle.length] as BreakerOutcome);
}

function opened(at = T0): OpenBreaker {
  const state = run(["transient", "transient", "transient"], CLOSED_BREAKER, at - 2);
  if (state.status !== "open") throw new Error("expected the run to open it");
  return state;
}

function probed(state: BreakerState, now: number, holder: string): HalfOpenBreaker {
  const admission = admit(state, now, holder, policy);
  if (admission.decision !== "probe") throw new Error(`expected a probe, got ${admission.decision}`);
  return admission.state;
}

describe("circuit breaker: opening", () => {
  it("opens on the run of transient failures, not before", () => {
    const two = run(["transient", "transient"]);
    expect(two).toMatchObject({ status: "closed", consecutiveFailures: 2 });
    const three = record(two, "transient", T0 + 5, "caller", policy);
    expect(three).toEqual({
      status: "open",
      openedAt: T0 + 5,
      openMs: 1_000,
      nextProbeAt: T0 + 1_005,
      opening: { cause: "run", consecutiveFailures: 3, windowCalls: 3, windowFailures: 3, windowMs: 10_000 },
    });
  });

  it("ends the run on a success or a permanent refusal", () => {
    for (const answer of ["succeeded", "permanent"] as const) {
      const state = run(["transient", "transient", answer, "transient", "transient"]);
      expect(state).toMatchObject({ status: "closed", consecutiveFailures: 2 });
    }
  });

  it("never counts a permanent refusal as a failure, however many", () => {
    const state = run(Array.from({ length: 50 }, () => "permanent" as const));
    expect(state).toMatchObject({ status: "closed", consecutiveFailures: 0 });
    expect(windowTotals(state, T0 + 50, policy)).toEqual({ calls: 50, failures: 0 });
  });

  it("opens on the failure rate only once the window holds the minimum of calls", () => {
    // Alternating: the run never reaches 3, the rate is 50% throughout.
    const alternating = pattern(10, ["succeeded", "transient"]);
    const nine = run(alternating.slice(0, 9));
    expect(nine.status).toBe("closed");
    expect(windowTotals(nine, T0 + 9, policy)).toEqual({ calls: 9, failures: 4 });
    expect(run(alternating).status).toBe("open");
  });

  it("does not open on a rate below the threshold", () => {
    const mostlyGood = pattern(30, ["transient", "succeeded", "succeeded"]);
    expect(run(mostlyGood)).toMatchObject({ status: "closed" });
  });

  it("forgets outcomes that have left the window", () => {
    const eight = pattern(8, ["succeeded", "transient"]);
    const old = run(eight);
    const later = T0 + policy.windowMs + bucketWidth(policy);
    expect(windowTotals(old, later, policy)).toEqual({ calls: 0, failures: 0 });
    const state = run(["succeeded", "transient", "succeeded", "transient"], old, later);
    expect(state.status).toBe("closed");
    expect(windowTotals(state, later + 4, policy)).toEqual({ calls: 4, failures: 2 });
  });

  it("counts calls reported together, taking the reporter's own run as the breaker's", () => {
    const failing = run(["transient", "transient"]);
    const batch = (failures: number, reporterRun: number) => ({
      buckets: [{ start: T0, calls: 4, failures }],
      lastFailureAt: failures > 0 ? T0 + 1 : null,
      run: reporterRun,
    });
    const answered = recordCalls(failing, batch(0, 0), T0 + 2, policy);
    expect(answered).toMatchObject({ status: "closed", consecutiveFailures: 0, lastFailureAt: T0 + 1 });
    expect(windowTotals(answered, T0 + 2, policy)).toEqual({ calls: 6, failures: 2 });
    // Another reporter's failures add to the window, not to a run it did not see.
    const mixed = recordCalls(failing, batch(1, 1), T0 + 2, policy);
    expect(mixed).toMatchObject({ status: "closed", consecutiveFailures: 1 });
    // A reporter whose own run reached failureRun opens it.
    expect(recordCalls(CLOSED_BREAKER, batch(3, 3), T0 + 2, policy).status).toBe("open");
  });

  it("opens on no batch without a failure in it, whatever the window holds", () => {
    const state = run(pattern(9, ["succeeded", "transient"]));
    const answers = { buckets: [{ start: T0, calls: 1, failures: 0 }], lastFailureAt: null, run: 5 };
    expect(recordCalls(state, answers, T0 + 9, policy).status).toBe("closed");
  });
});

describe("circuit breaker: open and half-open", () => {
  it("lets no call through while open, and counts nothing", () => {
    const state = opened();
    expect(admit(state, T0 + 999, "a", policy)).toEqual({ decision: "defer", until: T0 + 1_000, state });
    expect(record(state, "transient", T0 + 10, "a", policy)).toBe(state);
    expect(record(state, "succeeded", T0 + 10, "a", policy)).toBe(state);
  });

  it("admits exactly one probe when the open time is up; others wait for its lease", () => {
    const half = probed(opened(), T0 + 1_000, "a");
    expect(half.probe).toEqual({ holder: "a", since: T0 + 1_000, leaseExpiresAt: T0 + 3_000 });
    expect(admit(half, T0 + 1_000, "b", policy)).toEqual({
      decision: "defer",
      until: T0 + 3_000,
      state: half,
    });
    expect(admit(half, T0 + 2_999, "c", policy).decision).toBe("defer");
    // The holder asking again keeps its probe.
    expect(admit(half, T0 + 1_500, "a", policy)).toEqual({ decision: "probe", state: half });
  });

  it("gives the probe to another caller once the prober's lease has expired", () => {
    const half = probed(opened(), T0 + 1_000, "a");
    const taken = probed(half, T0 + 3_000, "b");
    expect(taken.probe).toEqual({ holder: "b", since: T0 + 3_000, leaseExpiresAt: T0 + 5_000 });
    // The first prober's late report changes nothing.
    expect(record(taken, "succeeded", T0 + 3_100, "a", policy)).toBe(taken);
    expect(record(taken, "transient", T0 + 3_100, "a", policy)).toBe(taken);
  });

  it("closes on the probe's success or refusal, with its counts cleared", () => {
    for (const answer of ["succeeded", "permanent"] as const) {
      const half = probed(opened(), T0 + 1_000, "a");
      expect(record(half, answer, T0 + 1_200, "a", policy)).toEqual({
        status: "closed",
        closedAt: T0 + 1_200,
        consecutiveFailures: 0,
        lastFailureAt: null,
        window: [],
      });
    }
  });

  it("reopens on a failed probe for twice as long each time, up to the cap", () => {
    let state: BreakerState = opened();
    const lengths: number[] = [];
    let now = T0;
    for (let probe = 0; probe < 6; probe++) {
      now = (state as OpenBreaker).nextProbeAt;
      state = record(probed(state, now, `p${probe}`), "transient", now + 10, `p${probe}`, policy);
      expect(state.status).toBe("open");
      lengths.push((state as OpenBreaker).openMs);
      expect((state as OpenBreaker).nextProbeAt).toBe(now + 10 + (state as OpenBreaker).openMs);
    }
    expect(lengths).toEqual([2_000, 4_000, 8_000, 8_000, 8_000, 8_000]);
    expect((state as OpenBreaker).openedAt).toBe(T0);
  });
});

describe("circuit breaker: transitions and views", () => {
  const open = opened();
  const half = probed(open, T0 + 1_000, "a");
  const closed = record(half, "succeeded", T0 + 1_001, "a", policy);
  const reopened = record(probed(open, T0 + 1_000, "b"), "transient", T0 + 1_001, "b", policy);

  it.each([
    ["closed -> open", CLOSED_BREAKER, open, "opened"],
    ["(none) -> open", undefined, open, "opened"],
    ["open -> half-open", open, half, "half-opened"],
    ["half-open -> open", half, reopened, "reopened"],
    ["half-open -> closed", half, closed, "closed"],
    ["closed -> closed", CLOSED_BREAKER, run(["transient"]), null],
    ["half-open -> half-open (new prober)", half, probed(half, T0 + 3_000, "z"), null],
  ] as const)("%s is %s", (_, previous, next, transition) => {
    expect(transitionOf(previous, next)).toBe(transition);
  });

  it("describes each state for the operator", () => {
    expect(viewOf("chargePayment", open, T0 + 10, policy)).toEqual({
      operation: "chargePayment",
      status: "open",
      since: new Date(T0).toISOString(),
      openedAt: new Date(T0).toISOString(),
      nextProbeAt: new Date(T0 + 1_000).toISOString(),
      opening: { cause: "run", consecutiveFailures: 3, windowCalls: 3, windowFailures: 3, windowMs: 10_000 },
      consecutiveFailures: 0,
      windowCalls: 0,
      windowFailures: 0,
    });
    expect(viewOf("chargePayment", half, T0 + 1_000, policy)).toMatchObject({
      status: "half-open",
      since: new Date(T0 + 1_000).toISOString(),
      nextProbeAt: new Date(T0 + 3_000).toISOString(),
    });
    expect(viewOf("x", run(["transient", "succeeded", "transient"]), T0 + 3, policy)).toMatchObject({
      status: "closed",
      since: null,
      consecutiveFailures: 1,
      windowCalls: 3,
      windowFailures: 2,
    });
  });

  it("F27-9: keeps why it opened through failed probes, shows it while open or half-open, and forgets it on closing", () => {
    const byRate = run(pattern(10, ["succeeded", "transient"]));
    const opening = {
      cause: "rate",
      consecutiveFailures: 1,
      windowCalls: 10,
      windowFailures: 5,
      windowMs: 10_000,
    };
    expect(byRate).toMatchObject({ status: "open", opening });
    const probing = probed(byRate, T0 + 1_009, "a");
    const again = record(probing, "transient", T0 + 1_010, "a", policy);
    expect([probing, again]).toMatchObject([
      { status: "half-open", opening },
      { status: "open", opening },
    ]);
    expect(viewOf("x", probing, T0 + 1_009, policy).opening).toEqual(opening);
    expect(viewOf("x", again, T0 + 1_010, policy).opening).toEqual(opening);
    const closedAgain = record(probed(again, T0 + 5_000, "b"), "succeeded", T0 + 5_001, "b", policy);
    expect(closedAgain).not.toHaveProperty("opening");
    expect(viewOf("x", closedAgain, T0 + 5_001, policy).opening).toBeNull();
    // A state stored before openings were kept reads as it was, and shows none.
    const older = { status: "open", openedAt: T0, openMs: 1_000, nextProbeAt: T0 + 1_000 };
    expect(checkedBreakerState(older)).toEqual(older);
    expect(viewOf("x", checkedBreakerState(older), T0, policy).opening).toBeNull();
    expect(() => checkedBreakerState({ ...older, opening: { ...opening, cause: "mood" } })).toThrow(
      ValidationError,
    );
  });

  it("validates a stored state, naming what is wrong", () => {
    expect(checkedBreakerState(JSON.parse(JSON.stringify(half)))).toEqual(half);
    expect(() => checkedBreakerState({ status: "open", openedAt: -1 }, "circuit breaker of x")).toThrow(
      ValidationError,
    );
    expect(() => checkedBreakerState({ status: "ajar" }, "circuit breaker of x")).toThrow(
      /circuit breaker of x/,
    );
  });
});

type Event =
  | { readonly kind: "admit"; readonly dt: number; readonly holder: number }
  | {
      readonly kind: "record";
      readonly dt: number;
      readonly holder: number;
      /** Reported by whoever holds the probe, when one is out. */
      readonly byProber: boolean;
      readonly outcome: BreakerOutcome;
    };

const step = fc.oneof(fc.nat(100), fc.nat(2_500));
const events = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant("admit" as const), dt: step, holder: fc.nat(3) }),
    fc.record({
      kind: fc.constant("record" as const),
      dt: step,
      holder: fc.nat(3),
      byProber: fc.boolean(),
      outcome: fc.constantFrom<BreakerOutcome>(
        "succeeded",
        "transient",
        "transient",
        "transient",
        "permanent",
      ),
    }),
  ),
  { maxLength: 200, size: "max" },
);

describe("circuit breaker: properties over any sequence of calls", () => {
  it("keeps its rules at every step, through every transition", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(events, (sequence) => {
        let state: BreakerState = CLOSED_BREAKER;
        let now = T0;
        for (const event of sequence) {
          now += event.dt;
          const holder = holderOf(state, event);
          const next: BreakerState =
            event.kind === "admit"
              ? admit(state, now, holder, policy).state
              : record(state, event.outcome, now, holder, policy);
          checkStep(state, next, event, now, holder);
          seen.add(`${state.status}>${next.status}`);
          state = next;
        }
      }),
      { numRuns: 300 },
    );
    // The generated sequences reach every transition the machine has.
    expect([...seen].sort()).toEqual(
      expect.arrayContaining(["closed>open", "open>half-open", "half-open>open", "half-open>closed"]),
    );
  });
});

/** Who reports or asks: the prober, when the event says so and a probe is out; else one of a few callers. */
function holderOf(state: BreakerState, event: Event): string {
  if (event.kind === "record" && event.byProber && state.status === "half-open") return state.probe.holder;
  return `h${event.holder}`;
}

function checkStep(state: BreakerState, next: BreakerState, event: Event, now: number, holder: string): void {
  // Only a transient failure opens or reopens it; only a probe's answer closes it.
  if (next.status === "open" && state.status !== "open") {
    expect(event.kind === "record" && event.outcome === "transient").toBe(true);
  }
  if (next.status === "closed" && state.status !== "closed") {
    expect(state.status === "half-open" && state.probe.holder === holder).toBe(true);
  }
  // Opening from closed: the run, or the rate over enough calls.
  if (state.status === "closed" && next.status === "open") {
    // The same failure under a policy that never opens: what the breaker counted when it opened.
    const counted = record(state, "transient", now, holder, { ...policy, failureRun: 1e9, minCalls: 1e9 });
    const run = counted.status === "closed" ? counted.consecutiveFailures : 0;
    const { calls, failures } = windowTotals(counted, now, policy);
    const byRate = calls >= policy.minCalls && failures >= policy.failureRate * calls;
    expect(run >= policy.failureRun || byRate).toBe(true);
  }
  // Open: nothing before the next probe time.
  if (state.status === "open" && now < state.nextProbeAt) expect(next).toBe(state);
  if (next.status !== "closed") {
    expect(next.openMs).toBeGreaterThanOrEqual(policy.openMs);
    expect(next.openMs).toBeLessThanOrEqual(policy.maxOpenMs);
  }
  // Half-open: while the lease lasts, every other caller is deferred.
  if (next.status === "half-open" && now < next.probe.leaseExpiresAt) {
    const other = `${next.probe.holder}-other`;
    expect(admit(next, now, other, policy).decision).toBe("defer");
  }
  expect(checkedBreakerState(JSON.parse(JSON.stringify(next)))).toEqual(next);
}
