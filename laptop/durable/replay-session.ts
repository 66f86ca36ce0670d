/**
 * An orchestration kept alive between its episodes, as the Durable Functions extension's "extended
 * sessions" do: the SDK's executor, with the orchestrator's generator paused where it yielded, is
 * given only the events that are new, instead of a fresh executor replaying the whole history.
 *
 * This reaches into `durable-functions` internals (pinned in package.json): the executor the SDK
 * keeps on `context.df`, and its event loop. A session is only made when those are where they are
 * expected, and any surprise while resuming ends the session; the runtime then replays in full,
 * which is always correct. What sessions give up is the determinism check on every episode: code that
 * is not replayed cannot be compared with its history. The runtime still checks it on every full
 * replay (a restart, a cache miss, and always when sessions are off, as in the runtime's own tests).
 */

/** What the SDK's orchestrator wrapper returns: the same shape a session builds. */
export interface SessionState {
  readonly isDone: boolean;
  readonly actions: readonly (readonly never[])[];
  readonly output?: unknown;
  readonly customStatus?: unknown;
}

/** The parts of the SDK's `TaskOrchestrationExecutor` a session drives. */
interface Executor {
  _isReplaying: boolean;
  readonly actions: readonly never[];
  readonly output: unknown;
  readonly exception: unknown;
  processEvent(event: unknown): void;
  isDoneExecuting(): boolean;
  hasCompletedSuccessfully(): boolean;
}

/** The invocation context the SDK ran the orchestrator with: it leaves its own context on `df`. */
type SessionContext = object & { readonly df?: unknown };

interface SdkOrchestrationContext {
  readonly taskOrchestratorExecutor?: unknown;
  readonly customStatus?: unknown;
}

export class ReplaySession {
  private constructor(
    private readonly context: SessionContext,
    private readonly executor: Executor,
    /** The length of the committed history this session has seen; a session is only resumed at it. */
    public historyLength: number,
  ) {}

  /**
   * The session of an orchestrator invocation that just ran with `context`, or undefined when the SDK
   * did not leave its executor where a session can drive it.
   */
  static after(context: SessionContext, historyLength: number): ReplaySession | undefined {
    const df = context.df as SdkOrchestrationContext | undefined;
    const executor = df?.taskOrchestratorExecutor as Partial<Executor> | undefined;
    if (
      typeof executor?.processEvent !== "function" ||
      typeof executor.isDoneExecuting !== "function" ||
      typeof executor.hasCompletedSuccessfully !== "function" ||
      !Array.isArray(executor.actions) ||
      typeof executor._isReplaying !== "boolean"
    ) {
      return undefined;
    }
    return new ReplaySession(context, executor as Executor, historyLength);
  }

  /** The SDK's executor this session drives: it knows which tasks it has numbered. */
  get sdkExecutor(): unknown {
    return this.executor;
  }

  /**
   * Feeds the new events (in the SDK's form), as the SDK's own loop would after a replay, and returns
   * the state it would return; undefined when the orchestrator failed (the caller replays in full,
   * which reports the failure the SDK's way) or anything else was not as expected.
   */
  resume(events: readonly unknown[]): SessionState | undefined {
    const executor = this.executor;
    try {
      for (const event of events) {
        executor._isReplaying = false;
        executor.processEvent(event);
        if (executor.isDoneExecuting()) break;
      }
    } catch {
      return undefined;
    }
    if (executor.exception !== undefined) return undefined;
    return {
      isDone: executor.hasCompletedSuccessfully(),
      actions: executor.actions.length === 0 ? [[]] : [executor.actions],
      output: executor.output,
      customStatus: (this.context.df as SdkOrchestrationContext | undefined)?.customStatus,
    };
  }
}
