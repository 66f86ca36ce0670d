/** What the SDK's orchestrator wrapper answers, and the replay it comes to in the runtime's terms. */
import { type ScheduledTask, summarizeActions } from "./history.js";
import { numberedTasks } from "./sdk-tasks.js";

/** What the SDK's orchestrator wrapper returns (or embeds in its error after `$OutOfProcData$:`). */
export interface SdkState {
  readonly isDone: boolean;
  readonly actions: readonly (readonly never[])[];
  readonly output?: unknown;
  readonly error?: string;
  readonly customStatus?: unknown;
}

export interface Replay {
  readonly done: boolean;
  readonly output: unknown;
  readonly failure: string | undefined;
  readonly customStatus: unknown;
  readonly tasks: readonly ScheduledTask[];
  /** Set when the orchestrator called `continueAsNew`, with the new execution's input. */
  readonly continueAsNew: { readonly input: unknown } | undefined;
}

/** The latest replay schema the SDK knows (V4), as a current extension offers it. */
export const UPPER_SCHEMA_VERSION = 3;
const OUT_OF_PROC_DATA = "$OutOfProcData$:";

/**
 * The replay's result in the runtime's terms: its tasks as the SDK's executor numbered them. A kind of
 * action this runtime does not run is the orchestrator's failure.
 */
export function replayOf(state: SdkState, failure: string | undefined, executor: unknown): Replay {
  try {
    const { continueAsNew } = summarizeActions(state.actions);
    return {
      done: state.isDone,
      output: state.output,
      failure,
      customStatus: state.customStatus,
      tasks: failure === undefined ? numberedTasks(executor) : [],
      continueAsNew,
    };
  } catch (error) {
    return {
      done: false,
      output: undefined,
      failure: (error as Error).message,
      customStatus: state.customStatus,
      tasks: [],
      continueAsNew: undefined,
    };
  }
}

export function stateEmbeddedIn(error: unknown): (SdkState & { error?: string }) | undefined {
  const message = error instanceof Error ? error.message : "";
  const at = message.indexOf(OUT_OF_PROC_DATA);
  if (at < 0) return undefined;
  try {
    return JSON.parse(message.slice(at + OUT_OF_PROC_DATA.length)) as SdkState;
  } catch {
    return undefined;
  }
}
