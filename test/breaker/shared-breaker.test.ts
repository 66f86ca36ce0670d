import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import type { BreakerChange } from "../../src/breaker/breaker-change.js";
import { type BreakerDecision, type BreakerTicket, SharedBreaker } from "../../src/breaker/shared-breaker.js";
import { type BreakerPolicy, windowTotals } from "../../src/domain/circuit-breaker.js";
import type { BreakerStore } from "../../src/ports/breaker-store.js";
import { MemoryBreakerStore } from "../support/memory-breaker-store.js";

const policy: BreakerPolicy = {
  failureRun: 3,
  failureRate: 0.5,
  minCalls: 20,
  windowMs: 10_000,
  openMs: 1_000,
  maxOpenMs: 8_000,
  probeLeaseMs: 2_000,
};
const OP = "chargePayment";

interface Instance {
  readonly breaker: SharedBreaker;
  readonly changes: BreakerChange[];
  readonly logger: MemoryLogger;
}

function setup(instances = 2, store: BreakerStore = new MemoryBreakerStore()) {
  const clock = new VirtualClock();
  let holders = 0;
  const make = (name: string): Instance => {
    const changes: BreakerChange[] = [];
    const logger = new MemoryLogger();
    const breaker = new SharedBreaker({
      store,
      clock,
      logger,
      policy,
      onTransition: (change) => changes.push(change),
      newHolder: () => `${name}-${++holders}`,
    });
    return { breaker, changes, logger };
  };
  return { clock, store, instances: Array.from({ length: instances }, (_, i) => make(`agent${i}`)) };
}

function ticketOf(decision: BreakerDecision): BreakerTicket {
  if (decision.decision === "defer") throw new Error(`deferred until ${decision.until.toISOString()}`);
  return decision.ticket;
}

/** `count` calls through `breaker`, each ending in `outcome`. */
async function calls(
  breaker: SharedBreaker,
  count: number,
  outcome: "succeeded" | "transient" | "permanent",
) {
  for (let i = 0; i < count; i++) await breaker.record(ticketOf(await breaker.admit(OP)), outcome);
}

describe("SharedBreaker", () => {
  it("is shared: once one instance opens it, another defers without calling", async () => {
    const { clock, store, instances } = setup();
    const [a, b] = instances as [Instance, Instance];
    await calls(a.breaker, 3, "transient");

    expect(a.changes.map((c) => c.transition)).toEqual(["opened"]);
    const decision = await b.breaker.admit(OP);
    expect(decision).toEqual({
      decision: "defer",
      until: new Date(clock.now().getTime() + 1_000),
      status: "open",
    });
    expect((await store.read(OP))?.state.status).toBe("open");
    expect(a.logger.events("breaker.opened")).toEqual([
      expect.objectContaining({ level: "warn", operation: OP, status: "open" }),
    ]);
    expect(b.changes).toEqual([]);
  });

  it("opens once, however many instances failing at once reach the threshold", async () => {
    const { clock, store, instances } = setup(3);
    for (let round = 0; round < 3; round++) {
      const tickets = await Promise.all(instances.map(async (i) => ticketOf(await i.breaker.admit(OP))));
      await Promise.all(instances.map((i, n) => i.breaker.record(tickets[n] as BreakerTicket, "transient")));
    }

    // Each instance's own run of 3 reaches failureRun; the first to write opens it, then nothing more.
    const stored = await store.read(OP);
    expect(stored?.state.status).toBe("open");
    expect(instances.flatMap((i) => i.changes.map((c) => c.transition))).toEqual(["opened"]);
    expect(stored?.state).toMatchObject({ nextProbeAt: clock.now().getTime() + policy.openMs });
  });

  it("counts each of several instances' failures once, each run its own", async () => {
    const { clock, store, instances } = setup(2);
    const [a, b] = instances as [Instance, Instance];
    const [ta, tb] = [ticketOf(await a.breaker.admit(OP)), ticketOf(await b.breaker.admit(OP))];
    await Promise.all([a.breaker.record(ta, "transient"), b.breaker.record(tb, "transient")]);

    const stored = (await store.read(OP))?.state;
    expect(stored).toMatchObject({ status: "closed", consecutiveFailures: 1 });
    expect(windowTotals(stored ?? fail(), clock.now().getTime(), policy)).toEqual({ calls: 2, failures: 2 });
  });

  it("costs a closed breaker with no failures no store request per call", async () => {
    const store = new MemoryBreakerStore();
    const { clock, instances } = setup(1, store);
    const [a] = instances as [Instance];
    await calls(a.breaker, 100, "succeeded");

    expect(store.reads).toBe(1);
    expect(store.writes).toBe(0);
    await clock.advance(250);
    await calls(a.breaker, 100, "succeeded");
    expect(store.reads).toBe(2);
    expect(store.writes).toBe(0);
  });

  it("trusts what it read for the cache period only", async () => {
    const { clock, instances } = setup();
    const [a, b] = instances as [Instance, Instance];
    await b.breaker.admit(OP);
    await calls(a.breaker, 3, "transient");

    // B read the breaker closed a moment ago.
    expect((await b.breaker.admit(OP)).decision).toBe("call");
    await clock.advance(250);
    expect((await b.breaker.admit(OP)).decision).toBe("defer");
  });

  it("lets exactly one probe through when half-open, and closes on its success", async () => {
    const { clock, instances } = setup(3);
    const [a, b, c] = instances as [Instance, Instance, Instance];
    await calls(a.breaker, 3, "transient");
    await clock.advance(1_000);

    const callers = [a, b, c, a, b, c];
    const decisions = await Promise.all(callers.map((i) => i.breaker.admit(OP)));
    const probes = decisions.flatMap((d, i) =>
      d.decision === "probe" ? [{ ticket: d.ticket, by: callers[i] }] : [],
    );
    expect(probes).toHaveLength(1);
    expect(decisions.filter((d) => d.decision === "call")).toEqual([]);
    for (const deferred of decisions.filter((d) => d.decision === "defer")) {
      expect(deferred).toMatchObject({ until: new Date(clock.now().getTime() + 2_000), status: "half-open" });
    }

    const [probe] = probes;
    await probe?.by?.breaker.record(probe.ticket, "succeeded");
    const all = instances.flatMap((i) => i.changes.map((change) => change.transition));
    expect(all.sort()).toEqual(["closed", "half-opened", "opened"]);
    await clock.advance(250);
    expect((await b.breaker.admit(OP)).decision).toBe("call");
  });

  it("reopens for twice as long when the probe fails", async () => {
    const { clock, store, instances } = setup();
    const [a, b] = instances as [Instance, Instance];
    await calls(a.breaker, 3, "transient");
    await clock.advance(1_000);

    const probe = ticketOf(await b.breaker.admit(OP));
    expect(probe.probe).toBe(true);
    await b.breaker.record(probe, "transient");

    expect(b.changes.map((c) => c.transition)).toEqual(["half-opened", "reopened"]);
    expect((await store.read(OP))?.state).toMatchObject({ status: "open", openMs: 2_000 });
    await clock.advance(1_999);
    expect((await a.breaker.admit(OP)).decision).toBe("defer");
    await clock.advance(1);
    expect((await a.breaker.admit(OP)).decision).toBe("probe");
  });

  it("gives the probe to another instance when the prober never reports", async () => {
    const { clock, instances } = setup();
    const [a, b] = instances as [Instance, Instance];
    await calls(a.breaker, 3, "transient");
    await clock.advance(1_000);
    const lost = ticketOf(await a.breaker.admit(OP));
    expect(lost.probe).toBe(true);

    await clock.advance(1_999);
    expect((await b.breaker.admit(OP)).decision).toBe("defer");
    await clock.advance(1);
    const taken = ticketOf(await b.breaker.admit(OP));
    expect(taken.probe).toBe(true);
    // The first prober's late answer changes nothing; the second one's closes it.
    await a.breaker.record(lost, "succeeded");
    expect(a.changes.map((c) => c.transition)).toEqual(["opened", "half-opened"]);
    await b.breaker.record(taken, "succeeded");
    expect(b.changes.map((c) => c.transition)).toEqual(["closed"]);
  });

  it("counts no failure and writes nothing for a call that ends while it is open", async () => {
    const store = new MemoryBreakerStore();
    const { instances } = setup(2, store);
    const [a, b] = instances as [Instance, Instance];
    const late = ticketOf(await b.breaker.admit(OP));
    await calls(a.breaker, 3, "transient");
    const before = await store.read(OP);

    // B still takes the breaker for closed: its write loses to A's, and it finds the breaker open.
    await b.breaker.record(late, "transient");
    expect(await store.read(OP)).toEqual(before);
    const writes = store.writes;
    await b.breaker.record(late, "transient");
    await b.breaker.record(late, "succeeded");
    expect(store.writes).toBe(writes);
    expect(await store.read(OP)).toEqual(before);
  });

  it("ends an instance's run with its own answers, not another's: each knows only its own order", async () => {
    const { clock, store, instances } = setup();
    const [a, b] = instances as [Instance, Instance];
    await calls(a.breaker, 2, "transient");
    await calls(a.breaker, 1, "succeeded");
    await calls(a.breaker, 1, "transient");
    const stored = (await store.read(OP))?.state;
    expect(stored).toMatchObject({ status: "closed", consecutiveFailures: 1 });
    expect(windowTotals(stored ?? fail(), clock.now().getTime(), policy)).toEqual({ calls: 4, failures: 3 });

    // B answered in between, but A's own calls failed three times running: the run opens it.
    await clock.advance(250);
    await calls(b.breaker, 1, "succeeded");
    await calls(a.breaker, 2, "transient");
    expect((await store.read(OP))?.state.status).toBe("open");
    expect(a.changes[0]?.opening).toMatchObject({ cause: "run", consecutiveFailures: 3 });
  });

  it("starts an instance's run anew after the breaker was open, whoever opened it", async () => {
    const { clock, store, instances } = setup();
    const [a, b] = instances as [Instance, Instance];
    await calls(a.breaker, 2, "transient");
    await calls(b.breaker, 3, "transient"); // B's run opens it
    await clock.advance(1_000);
    const probe = ticketOf(await b.breaker.admit(OP));
    await b.breaker.record(probe, "succeeded"); // closed again

    // A's two failures before the opening are no part of a run after it: one more does not open it.
    await clock.advance(250);
    await calls(a.breaker, 1, "transient");
    expect((await store.read(OP))?.state).toMatchObject({ status: "closed", consecutiveFailures: 1 });
  });

  it("writes successes that are not yet due with its next failure", async () => {
    const store = new MemoryBreakerStore();
    const { clock, instances } = setup(1, store);
    const [a] = instances as [Instance];
    await calls(a.breaker, 1, "transient");
    await calls(a.breaker, 1, "succeeded"); // due: the breaker has a failure to weigh it against
    const writes = store.writes;
    await calls(a.breaker, 2, "permanent"); // within the cache period of that write: kept back
    expect(store.writes).toBe(writes);
    await calls(a.breaker, 1, "transient");

    const stored = (await store.read(OP))?.state;
    expect(stored).toMatchObject({ status: "closed", consecutiveFailures: 1 });
    expect(windowTotals(stored ?? fail(), clock.now().getTime(), policy)).toEqual({ calls: 5, failures: 2 });
  });

  it("lets calls through and logs when the store fails", async () => {
    const broken: BreakerStore = {
      read: async () => Promise.reject(new Error("store unreachable")),
      write: async () => Promise.reject(new Error("store unreachable")),
      readAll: async () => [],
    };
    const { instances } = setup(1, broken);
    const [a] = instances as [Instance];

    const ticket = ticketOf(await a.breaker.admit(OP));
    await a.breaker.record(ticket, "transient");
    expect(a.logger.events("breaker.store.failed").map((line) => line.action)).toEqual(["admit", "record"]);
  });

  it("does nothing at all when turned off", async () => {
    const store = new MemoryBreakerStore();
    const clock = new VirtualClock();
    const breaker = new SharedBreaker({ store, clock, logger: new MemoryLogger(), policy, enabled: false });
    for (let i = 0; i < 10; i++) await breaker.record(ticketOf(await breaker.admit(OP)), "transient");

    expect(store.reads + store.writes).toBe(0);
  });

  it("lists every operation's breaker, the ones asked for first", async () => {
    const { instances } = setup();
    const [a] = instances as [Instance];
    await calls(a.breaker, 3, "transient");

    const views = await a.breaker.views(["reserveInventory", OP]);
    expect(views.map((v) => [v.operation, v.status])).toEqual([
      ["reserveInventory", "closed"],
      [OP, "open"],
    ]);
    expect(a.breaker.knownStatuses()).toEqual(new Map([[OP, "open"]]));
  });
});

function fail(): never {
  throw new Error("no breaker stored");
}

/** A store over `memory` whose writes fail while `down()` says so. */
function writesFailWhile(memory: MemoryBreakerStore, down: () => boolean): BreakerStore {
  return {
    read: (operation) => memory.read(operation),
    write: async (operation, state, version) => {
      if (down()) throw new Error("store unreachable");
      return memory.write(operation, state, version);
    },
    readAll: () => memory.readAll(),
  };
}

describe("F24-10: a store failure while recording loses no failure", () => {
  it("keeps the failures of writes that failed, and writes them with the next one that gets through", async () => {
    const memory = new MemoryBreakerStore();
    let down = true;
    const { clock, instances } = setup(
      1,
      writesFailWhile(memory, () => down),
    );
    const [a] = instances as [Instance];
    await calls(a.breaker, 2, "transient"); // both writes fail
    expect(a.logger.events("breaker.store.failed").map((line) => line.action)).toEqual(["record", "record"]);
    expect(await memory.read(OP)).toBeUndefined();

    down = false;
    await calls(a.breaker, 1, "succeeded"); // due: it has failures of its own to weigh it against
    const stored = (await memory.read(OP))?.state ?? fail();
    expect(windowTotals(stored, clock.now().getTime(), policy)).toEqual({ calls: 3, failures: 2 });
  });

  it("opens the breaker on the rate of failures recorded while the store was down", async () => {
    const memory = new MemoryBreakerStore();
    let down = true;
    const breaker = new SharedBreaker({
      store: writesFailWhile(memory, () => down),
      clock: new VirtualClock(),
      logger: new MemoryLogger(),
      // Only the rate can open it: all of 3 calls failed.
      policy: { ...policy, failureRun: 100, minCalls: 3, failureRate: 1 },
    });
    await calls(breaker, 2, "transient");
    down = false;
    await calls(breaker, 1, "transient");
    expect((await memory.read(OP))?.state).toMatchObject({ status: "open" });
  });
});

describe("SharedBreaker transitions", () => {
  it("keeps a written change when its listener throws", async () => {
    const store = new MemoryBreakerStore();
    const logger = new MemoryLogger();
    const breaker = new SharedBreaker({
      store,
      clock: new VirtualClock(),
      logger,
      policy,
      onTransition: () => {
        throw new Error("alert sink down");
      },
    });
    await calls(breaker, 3, "transient");

    expect((await store.read(OP))?.state.status).toBe("open");
    expect(logger.events("breaker.listener.failed")).toEqual([
      expect.objectContaining({ operation: OP, transition: "opened" }),
    ]);
    expect(logger.events("breaker.store.failed")).toEqual([]);
  });
});
