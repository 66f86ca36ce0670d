import type { InvocationContext } from "@azure/functions";
import type { Clock } from "../../src/ports/clock.js";
import type { RuntimeStatus } from "../../src/ports/durable-client.js";
import type { CapturedFunction } from "../worker/registration-capture.js";
import type { ActiveExecutions } from "./active-executions.js";
import type { DurableStore } from "./durable-store.js";
import { outcomeOf } from "./episode-outcome.js";
import { childStart, ending } from "./execution-links.js";
import {
  EventType,
  type HistoryEvent,
  history,
  type RecordedTask,
  recordedTasks,
  toPayload,
} from "./history.js";
import { ReplaySession } from "./replay-session.js";
import { type Replay, replayOf, type SdkState, stateEmbeddedIn, UPPER_SCHEMA_VERSION } from "./sdk-replay.js";
import { executorOf } from "./sdk-tasks.js";
import type { EpisodeCommit, InstanceRow } from "./store-records.js";

/** What one instance's episode comes to, ready to be committed with the others of its round. */
export interface Episode {
  readonly instance: InstanceRow;
  readonly inboxEvents: number;
  /** The instance's history before this episode; the episode's events are appended once committed. */
  readonly past: HistoryEvent[];
  /** The tasks that history has scheduled, by sequence number. */
  readonly recorded: RecordedTask[];
  /** How many of the instance's waiting activity results it took (the first ones). */
  readonly completions: number;
  readonly commit: EpisodeCommit;
}

export interface EpisodeReplayerOptions {
  readonly store: DurableStore;
  readonly clock: Clock;
  /** The app's orchestrator functions, by name. */
  readonly orchestrators: ReadonlyMap<string, CapturedFunction>;
  readonly executions: ActiveExecutions;
  /** Keep each running orchestration in memory between episodes (see `LocalDurableRuntimeOptions`). */
  readonly replaySessions: boolean;
  readonly contextOf: (fn: CapturedFunction) => InvocationContext;
}

/**
 * Replays an instance's episode: its orchestrator, through the SDK's own executor, given the history
 * and the events waiting for it (or only those, to the session kept since its last episode), and
 * works out what the episode records. It reads the store but writes nothing.
 */
export class EpisodeReplayer {
  private readonly store: DurableStore;
  private readonly clock: Clock;
  private readonly orchestrators: ReadonlyMap<string, CapturedFunction>;
  private readonly executions: ActiveExecutions;
  private readonly replaySessions: boolean;
  private readonly contextOf: (fn: CapturedFunction) => InvocationContext;
  /** Each recorded event in the form the SDK replays, made once; entries go with their events. */
  private readonly sdkEvents = new WeakMap<HistoryEvent, Readonly<Record<string, unknown>>>();

  constructor(options: EpisodeReplayerOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.orchestrators = options.orchestrators;
    this.executions = options.executions;
    this.replaySessions = options.replaySessions;
    this.contextOf = options.contextOf;
  }

  /** Replays one instance with the events waiting for it and works out what to record; writes nothing. */
  async replayEpisode(instanceId: string): Promise<Episode | undefined> {
    const inbox = this.store.inbox(instanceId);
    const lastEntry = inbox[inbox.length - 1];
    const completions = this.executions.completionsFor(instanceId);
    if (!lastEntry && completions.length === 0) return undefined;
    const instance = this.executions.instances.get(instanceId) ?? this.store.instance(instanceId);
    if (!instance) return undefined;
    this.executions.instances.set(instanceId, instance);
    const at = this.clock.now();
    const past = this.executions.histories.get(instanceId) ?? this.store.history(instanceId);
    const fresh = [
      history.orchestratorStarted(at),
      ...inbox.map((entry) => entry.event),
      ...completions.map((completion) => completion.event),
    ];
    const orchestrator = this.orchestrators.get(instance.name);

    // A session at the end of the committed history takes only the new events; otherwise replay in full.
    let session = this.executions.takeSession(instanceId, past.length);
    const resumed = session?.resume(fresh.map((event) => this.sdkEvent(event)));
    let replay: Replay;
    if (resumed) replay = replayOf(resumed, undefined, session?.sdkExecutor);
    else if (orchestrator) {
      const full = await this.replay(orchestrator, instance, [...past, ...fresh]);
      replay = full.replay;
      session = full.session;
    } else {
      replay = replayOf(
        { isDone: false, actions: [] },
        `no orchestration named ${instance.name} is registered`,
        undefined,
      );
      session = undefined;
    }

    const recorded = this.executions.recorded.get(instanceId) ?? recordedTasks(past);
    const { failure, continuing, work } = outcomeOf(replay, recorded, at, instance);
    const { scheduledEvents, activities, timers, canceledTimerIds, nowRecorded, children, entityRequests } =
      work;
    const status: RuntimeStatus =
      failure !== undefined ? "Failed" : replay.done && !continuing ? "Completed" : "Running";
    const result = status === "Completed" ? toPayload(replay.output) : failure;
    const closing =
      status === "Completed" || status === "Failed" ? [history.executionCompleted(at, status, result)] : [];
    const events = [...fresh, ...scheduledEvents, history.orchestratorCompleted(at), ...closing];
    if (session && status === "Running" && !continuing && this.tellSession(session, scheduledEvents)) {
      session.historyLength = past.length + events.length;
      this.executions.sessions.set(instanceId, session);
    }
    return {
      instance,
      inboxEvents: inbox.length + completions.length,
      completions: completions.length,
      past,
      recorded: nowRecorded,
      commit: {
        instanceId,
        executionId: instance.executionId,
        consumedUpTo: lastEntry?.id ?? 0,
        completedActivityIds: completions.map((completion) => completion.activityId),
        events,
        activities,
        timers,
        canceledTimerIds,
        status,
        output: status === "Completed" ? (toPayload(replay.output) ?? null) : null,
        failure: failure ?? null,
        customStatus: toPayload(replay.customStatus) ?? null,
        at: at.getTime(),
        children: children.map((child) => childStart(instance, child, at)),
        entityRequests,
        ...ending(instance, status, result, continuing, at),
      },
    };
  }

  /**
   * Gives a session the events it needs of those the episode adds: a call to an entity is known to
   * the SDK by the request id its `EventSent` carries, which a full replay reads from the history.
   * False if the session could not take them (it is then dropped, and the next episode replays).
   */
  private tellSession(session: ReplaySession, added: readonly HistoryEvent[]): boolean {
    const sent: Readonly<Record<string, unknown>>[] = [];
    for (const event of added) if (event.EventType === EventType.EventSent) sent.push(this.sdkEvent(event));
    return sent.length === 0 || session.resume(sent) !== undefined;
  }

  /** A full replay of `events` through the SDK; with sessions on, the session it leaves behind. */
  private async replay(
    orchestrator: CapturedFunction,
    instance: InstanceRow,
    events: HistoryEvent[],
  ): Promise<{ replay: Replay; session: ReplaySession | undefined }> {
    const trigger = {
      history: events.map((event) => this.sdkEvent(event)),
      input: instance.input === null ? undefined : JSON.parse(instance.input),
      instanceId: instance.instanceId,
      isReplaying: events.some((e) => e.EventType === 13),
      parentInstanceId: instance.parent?.instanceId ?? "",
      upperSchemaVersion: UPPER_SCHEMA_VERSION,
      maximumShortTimerDuration: "6.00:00:00",
      longRunningTimerIntervalDuration: "3.00:00:00",
      defaultHttpAsyncRequestSleepTimeMillseconds: 30_000,
    };
    const context = this.contextOf(orchestrator);
    try {
      const state = (await orchestrator.handler(trigger, context)) as SdkState;
      const session = this.replaySessions && !state.isDone ? ReplaySession.after(context, 0) : undefined;
      return { replay: replayOf(state, undefined, executorOf(context)), session };
    } catch (error) {
      const embedded = stateEmbeddedIn(error);
      const failure = embedded?.error ?? (error instanceof Error ? error.message : String(error));
      const replay = replayOf(embedded ?? { isDone: false, actions: [] }, failure, undefined);
      return { replay, session: undefined };
    }
  }

  /**
   * The event as the SDK reads it, its timestamp a Date (the SDK would otherwise convert it in place).
   * Without sessions it is made once per event and handed to every later replay: frozen, so an SDK
   * that wrote to it would fail loudly rather than leak state from one replay into the next.
   */
  private sdkEvent(event: HistoryEvent): Readonly<Record<string, unknown>> {
    // With sessions an event is fed to the SDK once, in a copy no later replay sees: caching it would
    // only cost the weak map's upkeep, and freezing it (most of the copy's cost) would guard nothing.
    if (this.replaySessions) return { ...event, Timestamp: new Date(event.Timestamp) };
    let converted = this.sdkEvents.get(event);
    if (!converted) {
      converted = Object.freeze({ ...event, Timestamp: new Date(event.Timestamp) });
      this.sdkEvents.set(event, converted);
    }
    return converted;
  }
}
