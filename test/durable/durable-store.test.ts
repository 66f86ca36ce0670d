import { afterEach, describe, expect, it } from "vitest";
import { DurableStore, type EpisodeCommit } from "../../laptop/durable/durable-store.js";
import { type HistoryEvent, history } from "../../laptop/durable/history.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { temporaryDatabasePath } from "./runtime-harness.js";

const AT = new Date("2026-03-01T10:00:00.000Z");
const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function fileStore(): { store: DurableStore; db: EmbeddedDatabase; reopen: () => DurableStore } {
  const { path, remove } = temporaryDatabasePath();
  const db = openDatabase(path);
  const others: EmbeddedDatabase[] = [];
  cleanups.push(() => {
    for (const other of others) other.close();
    db.close();
    remove();
  });
  return {
    store: new DurableStore(db),
    db,
    reopen: () => {
      const other = openDatabase(path);
      others.push(other);
      return new DurableStore(other);
    },
  };
}

function startInstance(store: DurableStore, instanceId: string): void {
  store.createInstance(
    {
      instanceId,
      executionId: `${instanceId}-exec`,
      name: "test",
      status: "Pending",
      input: null,
      createdAt: AT.getTime(),
      updatedAt: AT.getTime(),
    },
    history.executionStarted(AT, "test", undefined),
    store.instance(instanceId) !== undefined,
  );
}

function commitEverything(store: DurableStore, instanceId: string, status: "Running" | "Completed") {
  const inbox = store.inbox(instanceId);
  return store.commitEpisodes([
    {
      instanceId,
      executionId: `${instanceId}-exec`,
      consumedUpTo: inbox[inbox.length - 1]?.id ?? 0,
      completedActivityIds: [],
      events: inbox.map((entry) => entry.event),
      activities:
        status === "Running"
          ? [
              { taskId: 0, name: "work", input: null },
              { taskId: 1, name: "work", input: null },
            ]
          : [],
      timers: [],
      canceledTimerIds: [],
      children: [],
      entityRequests: [],
      status,
      output: null,
      failure: null,
      customStatus: null,
      at: AT.getTime(),
    },
  ]);
}

/** An episode of a running instance that records `events` and schedules nothing. */
function runningEpisode(instanceId: string, events: HistoryEvent[], consumedUpTo = 0): EpisodeCommit {
  return {
    instanceId,
    executionId: `${instanceId}-exec`,
    consumedUpTo,
    completedActivityIds: [],
    events,
    activities: [],
    timers: [],
    canceledTimerIds: [],
    children: [],
    entityRequests: [],
    status: "Running",
    output: null,
    failure: null,
    customStatus: null,
    at: AT.getTime(),
  };
}

const types = (events: readonly { event: HistoryEvent }[]) => events.map((entry) => entry.event.EventType);

describe("DurableStore inbox", () => {
  it("reads back every event written, and drops them as episodes consume them", () => {
    const { store } = fileStore();
    startInstance(store, "a");
    expect(types(store.inbox("a"))).toEqual([0]);
    const [work] = commitEverything(store, "a", "Running");
    expect(store.inbox("a")).toEqual([]);
    const activity = work?.activities[0];
    if (!activity) throw new Error("the episode queued no activity");
    store.completeActivities([{ activityId: activity.id, event: history.taskCompleted(AT, 0, '"ok"') }]);
    expect(store.raiseEvent("a", history.eventRaised(AT, "reply", '"yes"'))).toBe("delivered");
    expect(types(store.inbox("a"))).toEqual([5, 15]);
    expect(store.instancesWithInbox()).toEqual(["a"]);
  });

  it("reads the same as a store opened afresh on the file", () => {
    const { store, reopen } = fileStore();
    startInstance(store, "a");
    startInstance(store, "b");
    commitEverything(store, "a", "Running");
    store.raiseEvent("a", history.eventRaised(AT, "reply", undefined));
    const fresh = reopen();
    for (const id of ["a", "b"]) expect(store.inbox(id)).toEqual(fresh.inbox(id));
    expect(store.instancesWithInbox()).toEqual(fresh.instancesWithInbox());
  });

  it("on continue-as-new keeps only the raised events that came after the last episode's inbox", () => {
    const { store, reopen } = fileStore();
    startInstance(store, "a");
    commitEverything(store, "a", "Running");
    store.raiseEvent("a", history.eventRaised(AT, "taken", undefined));
    const consumedUpTo = store.inbox("a").at(-1)?.id ?? 0;
    // Arrived while the last episode replayed: a raised event, and a timer of the ending execution.
    store.raiseEvent("a", history.eventRaised(AT, "later", undefined));
    store.raiseEvent("a", history.timerFired(AT, 0, AT));
    const next = { ...history.executionStarted(AT, "test", "2") };
    store.commitEpisodes([
      {
        ...runningEpisode("a", [], consumedUpTo),
        continueAsNew: {
          row: {
            instanceId: "a",
            executionId: "a-exec-2",
            name: "test",
            status: "Pending",
            input: "2",
            output: null,
            failure: null,
            customStatus: null,
            createdAt: AT.getTime(),
            updatedAt: AT.getTime(),
          },
          started: next,
        },
      },
    ]);
    for (const view of [store, reopen()]) {
      expect(view.inbox("a").map((entry) => [entry.event.EventType, entry.event.Name])).toEqual([
        [15, "later"],
        [0, "test"],
      ]);
      expect(view.instance("a")).toMatchObject({ executionId: "a-exec-2", status: "Pending", input: "2" });
      expect(view.history("a")).toEqual([]);
      expect(view.activities()).toEqual([]);
    }
  });

  it("keeps nothing of a transaction that failed", () => {
    const { store, reopen } = fileStore();
    startInstance(store, "a");
    const [work] = commitEverything(store, "a", "Running");
    const [first, second] = work?.activities ?? [];
    if (!first || !second) throw new Error("the episode queued no activities");
    // JSON cannot hold a BigInt: the second write throws after the first one was made.
    const unwritable = { ...history.eventRaised(AT, "x", undefined), Bad: 1n } as unknown as HistoryEvent;
    expect(() =>
      store.completeActivities([
        { activityId: first.id, event: history.taskCompleted(AT, 0, '"ok"') },
        { activityId: second.id, event: unwritable },
      ]),
    ).toThrow(/BigInt/);
    expect(store.inbox("a")).toEqual([]);
    expect(reopen().inbox("a")).toEqual([]);
  });

  it("drops the waiting events of an instance that finishes or is terminated", () => {
    const { store } = fileStore();
    startInstance(store, "a");
    startInstance(store, "b");
    commitEverything(store, "b", "Running");
    store.raiseEvent("b", history.eventRaised(AT, "late", undefined));
    store.terminate("b", "stop", AT.getTime(), () => history.eventRaised(AT, "unused", undefined));
    expect(store.inbox("b")).toEqual([]);
    store.raiseEvent("a", history.eventRaised(AT, "early", undefined));
    commitEverything(store, "a", "Completed");
    expect(store.inbox("a")).toEqual([]);
    expect(store.instancesWithInbox()).toEqual([]);
  });
});

describe("DurableStore history", () => {
  function episodes(db: EmbeddedDatabase, instanceId: string): number[] {
    return db
      .prepare<[string], { episode: number }>(
        "SELECT episode FROM df_history WHERE instance_id = ? ORDER BY episode",
      )
      .all(instanceId)
      .map((row) => row.episode);
  }

  it("numbers each instance's rows one after another, whatever failed, reopened or replaced meanwhile", () => {
    const { store, db, reopen } = fileStore();
    startInstance(store, "a");
    startInstance(store, "b");
    commitEverything(store, "a", "Running");
    expect(episodes(db, "a")).toEqual([1]);

    // A batch that fails after writing a's row: nothing of it stays, a's next row is still number 2.
    const unwritable = { ...history.eventRaised(AT, "x", undefined), Bad: 1n } as unknown as HistoryEvent;
    const raised = history.eventRaised(AT, "y", undefined);
    expect(() =>
      store.commitEpisodes([runningEpisode("a", [raised]), runningEpisode("b", [unwritable])]),
    ).toThrow(/BigInt/);
    expect(episodes(db, "a")).toEqual([1]);
    store.commitEpisodes([runningEpisode("a", [raised])]);
    expect(episodes(db, "a")).toEqual([1, 2]);

    // A store opened afresh knows nothing yet of a's rows, and numbers on from what the file holds.
    const fresh = reopen();
    fresh.commitEpisodes([runningEpisode("a", [raised])]);
    expect(episodes(db, "a")).toEqual([1, 2, 3]);

    // Finished and started again under the same id: a fresh history, numbered from 1.
    commitEverything(fresh, "a", "Completed");
    startInstance(fresh, "a");
    commitEverything(fresh, "a", "Running");
    expect(episodes(db, "a")).toEqual([1]);
    expect(fresh.history("a").map((event) => event.EventType)).toEqual([0]);
  });
});

describe("DurableStore history numbers after a row written behind its back", () => {
  it("fails the one commit whose number was taken, then asks the file again and goes on", () => {
    const { store, db, reopen } = fileStore();
    startInstance(store, "a");
    commitEverything(store, "a", "Running");
    // Another store writes a row for the same instance (one runtime a file is the rule; this breaks it).
    const other = reopen();
    other.raiseEvent("a", history.eventRaised(AT, "x", undefined));
    const inbox = other.inbox("a");
    other.commitEpisodes([
      runningEpisode(
        "a",
        inbox.map((entry) => entry.event),
        inbox.at(-1)?.id ?? 0,
      ),
    ]);
    const next = () => store.commitEpisodes([runningEpisode("a", [history.eventRaised(AT, "y", undefined)])]);
    expect(next).toThrow(/UNIQUE|PRIMARY KEY|constraint/i);
    next();
    expect(
      db
        .prepare<[string], { episode: number }>("SELECT episode FROM df_history WHERE instance_id = ?")
        .all("a")
        .map((row) => row.episode),
    ).toEqual([1, 2, 3]);
  });
});
