import { describe, expect, it } from "vitest";
import { loadBreakerSettings } from "../../src/config/breaker-settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import {
  type BreakerPolicy,
  type BreakerState,
  CLOSED_BREAKER,
  record,
} from "../../src/domain/circuit-breaker.js";

/** The breaker as shipped: the defaults of the BREAKER_* settings. */
const policy: BreakerPolicy = loadBreakerSettings({});
const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/**
 * The pace that makes the rate rule most likely to open by chance: the window (four fifths to all of
 * `windowMs`, in buckets) holds as few calls as it judges, `minCalls`, and never many more.
 */
const PACE_MS = (0.8 * policy.windowMs) / policy.minCalls;
const FEWEST = policy.minCalls;
const MOST = Math.ceil(policy.windowMs / PACE_MS) + 1;

/** P(X >= k) for X ~ Binomial(n, p). */
function binomialTail(n: number, p: number, k: number): number {
  let total = 0;
  let choose = 1; // C(n, i), built up from i = 0
  for (let i = 0; i <= n; i++) {
    if (i > 0) choose = (choose * (n - i + 1)) / i;
    if (i >= k) total += choose * p ** i * (1 - p) ** (n - i);
  }
  return total;
}

/**
 * An upper bound on the expected number of openings by chance in `calls` calls that each fail with
 * probability `p`, independently, at the pace above. Each failure is one chance to open it:
 * - by the rate: the window of n calls (FEWEST <= n <= MOST) holds this failure and n - 1 others, and
 *   opens when at least ceil(failureRate * n) failed: P(Binomial(n - 1, p) >= ceil(rate * n) - 1);
 * - by the run: the failureRun - 1 calls before it failed too: p^(failureRun - 1).
 * The expectation is at most (calls * p) * (rate term + run term), overlaps counted twice.
 */
function falseOpeningBound(p: number, calls: number): number {
  let rateTerm = 0;
  for (let n = FEWEST; n <= MOST; n++) {
    rateTerm = Math.max(rateTerm, binomialTail(n - 1, p, Math.ceil(policy.failureRate * n) - 1));
  }
  const runTerm = p ** (policy.failureRun - 1);
  return calls * p * (rateTerm + runTerm);
}

/**
 * `calls` calls at the pace above by `reporters` Agent instances in turn, each counting its own run;
 * each call fails with the probability `failing(i)` gives the i-th. Answers each opening's call index;
 * after one it starts again from a closed breaker, as a probe's answer would.
 */
function simulate(calls: number, failing: (i: number) => number, seed: number, reporters = 1): number[] {
  const random = seededRandom(seed);
  const runs = new Array<number>(reporters).fill(0);
  const openings: number[] = [];
  let state: BreakerState = CLOSED_BREAKER;
  for (let i = 0; i < calls; i++) {
    const now = T0 + i * PACE_MS;
    const reporter = i % reporters;
    const failed = random() < failing(i);
    runs[reporter] = failed ? (runs[reporter] ?? 0) + 1 : 0;
    const outcome = failed ? "transient" : "succeeded";
    state = record(state, outcome, now, `agent-${reporter}`, policy, runs[reporter]);
    if (state.status === "open") {
      openings.push(i);
      state = { ...CLOSED_BREAKER, closedAt: now };
      runs.fill(0);
    }
  }
  return openings;
}

const CALLS = 200_000;

describe("F24-11: the breaker takes a flaky partner for a flaky one, and a dead one for a dead one", () => {
  it("opens by chance at a 20% transient rate: under 0.11 openings expected in 200,000 calls", () => {
    // 2.6e-6 a failure: 1.1e-11 by the rate, 0.2^8 = 2.6e-6 by the run.
    const bound = falseOpeningBound(0.2, CALLS);
    expect(bound).toBeLessThan(0.11);
    // With at most `bound` openings expected, seeing one has probability at most `bound` (Markov); the
    // seeds below are three draws, and more than one opening in any would be a 1-in-200 event at most.
    for (const seed of [7, 8, 9]) expect(simulate(CALLS, () => 0.2, seed).length).toBeLessThanOrEqual(1);
  });

  it("opens by chance at 30% (transient faults, slow and lost answers together): about 4 in 200,000 calls", () => {
    // 6.6e-5 a failure: 5.9e-8 by the rate, 0.3^8 = 6.6e-5 by the run.
    const bound = falseOpeningBound(0.3, CALLS);
    expect(bound).toBeLessThan(4);
    // Poisson with a mean of at most 4: more than 12 has a probability under 1e-3.
    expect(simulate(CALLS, () => 0.3, 11).length).toBeLessThanOrEqual(12);
  });

  it("states a bound that means something: at 60% failures it does open, and often", () => {
    expect(falseOpeningBound(0.6, CALLS)).toBeGreaterThan(1);
    expect(simulate(20_000, () => 0.6, 5).length).toBeGreaterThan(10);
  });

  it("opens within failureRun calls of a partner going dead, for an instance that makes the calls", () => {
    const dies = 10_000;
    const [opened] = simulate(dies + 1_000, (i) => (i < dies ? 0.2 : 1), 3);
    expect(opened).toBeGreaterThanOrEqual(dies);
    expect((opened ?? Number.POSITIVE_INFINITY) - dies + 1).toBeLessThanOrEqual(policy.failureRun);
  });

  it("opens within one window's calls of a partner going dead, when 20 instances share the calls", () => {
    // Each instance sees one call in 20: no run of its own reaches failureRun first; the rate opens it.
    const dies = 10_000;
    const [opened] = simulate(dies + 1_000, (i) => (i < dies ? 0.2 : 1), 3, 20);
    expect(opened).toBeGreaterThanOrEqual(dies);
    expect((opened ?? Number.POSITIVE_INFINITY) - dies + 1).toBeLessThanOrEqual(MOST);
  });
});
