/**
 * The part of the Durable Functions client that the handlers use. Under the Functions host it wraps
 * `df.getClient(context)`; on the embedded host the local durable runtime implements it.
 */
export const RUNTIME_STATUSES = [
  "Pending",
  "Running",
  "Suspended",
  "Completed",
  "Failed",
  "Terminated",
] as const;
/**
 * `Suspended`: an operator suspended the instance (the extension's suspend API); it runs again when
 * resumed. Neither finished nor running: the Supervisor leaves its attempt alone (F24-9).
 */
export type RuntimeStatus = (typeof RUNTIME_STATUSES)[number];

export const FINISHED_STATUSES: readonly RuntimeStatus[] = ["Completed", "Failed", "Terminated"];

export interface OrchestrationStatus {
  readonly instanceId: string;
  readonly name: string;
  readonly runtimeStatus: RuntimeStatus;
  readonly input: unknown;
  readonly output: unknown;
  readonly customStatus: unknown;
  /** The orchestrator's error message when it failed. */
  readonly failure: string | undefined;
  readonly createdTime: Date;
  readonly lastUpdatedTime: Date;
}

export interface StartOptions {
  /** Explicit instance id; refused while an instance with this id is Pending, Running or Suspended. */
  readonly instanceId: string;
  readonly input?: unknown;
}

export type RaiseEventResult =
  | { readonly delivered: true }
  | { readonly delivered: false; readonly reason: "notFound" | "notRunning" };

export interface DurableClient {
  startNew(orchestrationName: string, options: StartOptions): Promise<string>;
  /** Events for an unknown or finished instance are dropped and reported, never thrown. */
  raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<RaiseEventResult>;
  getStatus(instanceId: string): Promise<OrchestrationStatus | undefined>;
  terminate(instanceId: string, reason: string): Promise<void>;
  /** Deletes the instance and its history; false if there was none. */
  purge(instanceId: string): Promise<boolean>;
  /** Ids of the finished instances (`FINISHED_STATUSES`) created before `createdBefore`. */
  listFinished(filter: { readonly createdBefore: Date }): Promise<readonly string[]>;
}

export class InstanceAlreadyRunningError extends Error {
  override readonly name = "InstanceAlreadyRunningError";
  readonly kind = "InstanceAlreadyRunning" as const;
  constructor(
    readonly instanceId: string,
    readonly status: RuntimeStatus,
  ) {
    super(`an orchestration instance with id ${instanceId} is already ${status}`);
  }
}
