import type { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import {
  type DurableClient,
  InstanceAlreadyRunningError,
  type OrchestrationStatus,
  type RaiseEventResult,
  type RuntimeStatus,
  type StartOptions,
} from "../../ports/durable-client.js";

/** The calls this adapter makes on the durable-functions SDK's client (`df.getClient(context)`). */
export interface SdkDurableClient {
  startNew(name: string, options?: { instanceId?: string; input?: unknown }): Promise<string>;
  raiseEvent(instanceId: string, eventName: string, eventData: unknown): Promise<void>;
  getStatus(instanceId: string): Promise<SdkStatus>;
  terminate(instanceId: string, reason: string): Promise<void>;
  purgeInstanceHistory(instanceId: string): Promise<{ instancesDeleted: number }>;
  getStatusBy(filter: {
    createdTimeTo?: Date;
    runtimeStatus?: string[];
  }): Promise<readonly { readonly instanceId: string }[]>;
}

export interface SdkStatus {
  readonly name: string;
  readonly instanceId: string;
  readonly createdTime: Date;
  readonly lastUpdatedTime: Date;
  readonly input: unknown;
  readonly output: unknown;
  readonly runtimeStatus: string;
  readonly customStatus?: unknown;
}

/**
 * The DurableClient port over the Durable Functions client. The extension refuses a start under the id
 * of a running instance (409, with `overridableExistingInstanceStates` at `NonRunningStates` as
 * host.json sets it; `AnyState` would replace it), and silently drops an event for an instance that
 * does not wait for it; the port promises neither, so both calls look at the instance's status first.
 */
export class FunctionsDurableClient implements DurableClient {
  constructor(private readonly sdk: SdkDurableClient) {}

  async startNew(orchestrationName: string, options: StartOptions): Promise<string> {
    const existing = await this.getStatus(options.instanceId);
    if (existing && isActive(existing.runtimeStatus)) {
      throw new InstanceAlreadyRunningError(options.instanceId, existing.runtimeStatus);
    }
    return this.sdk.startNew(orchestrationName, { instanceId: options.instanceId, input: options.input });
  }

  async raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<RaiseEventResult> {
    const status = await this.getStatus(instanceId);
    if (!status) return { delivered: false, reason: "notFound" };
    // A suspended instance keeps the event until it is resumed.
    if (!isActive(status.runtimeStatus)) return { delivered: false, reason: "notRunning" };
    try {
      await this.sdk.raiseEvent(instanceId, eventName, eventData ?? null);
    } catch (error) {
      // The instance was purged between the status read and the event.
      if (error instanceof Error && error.message.startsWith("No instance with ID")) {
        return { delivered: false, reason: "notFound" };
      }
      throw error;
    }
    return { delivered: true };
  }

  async getStatus(instanceId: string): Promise<OrchestrationStatus | undefined> {
    let status: SdkStatus | undefined;
    try {
      status = await this.sdk.getStatus(instanceId);
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
    if (!status?.instanceId) return undefined;
    const output = status.output;
    return {
      instanceId: status.instanceId,
      name: status.name,
      runtimeStatus: runtimeStatusOf(status.runtimeStatus),
      input: status.input,
      output,
      customStatus: status.customStatus ?? null,
      failure: status.runtimeStatus === "Failed" ? String(output ?? "") : undefined,
      createdTime: new Date(status.createdTime),
      lastUpdatedTime: new Date(status.lastUpdatedTime),
    };
  }

  async terminate(instanceId: string, reason: string): Promise<void> {
    await this.sdk.terminate(instanceId, reason);
  }

  async purge(instanceId: string): Promise<boolean> {
    const result = await this.sdk.purgeInstanceHistory(instanceId);
    return result.instancesDeleted > 0;
  }

  async listFinished(filter: { readonly createdBefore: Date }): Promise<readonly string[]> {
    const statuses = await this.sdk.getStatusBy({
      createdTimeTo: filter.createdBefore,
      runtimeStatus: ["Completed", "Failed", "Terminated", "Canceled"],
    });
    return statuses.map((status) => status.instanceId);
  }
}

/** The port over the SDK client of one invocation's `durableClient` input binding. */
export function durableClientOf(context: InvocationContext): DurableClient {
  return new FunctionsDurableClient(df.getClient(context) as unknown as SdkDurableClient);
}

/**
 * The SDK's status as the port names it. `Suspended` is its own (F24-9): an operator suspended the
 * instance, which neither runs nor has finished. A continued-as-new instance is running again.
 */
function runtimeStatusOf(status: string): RuntimeStatus {
  switch (status) {
    case "Completed":
    case "Failed":
    case "Terminated":
    case "Pending":
    case "Suspended":
      return status;
    case "Canceled":
      return "Terminated";
    default:
      return "Running";
  }
}

/** Not finished: the extension refuses a start under its id, and keeps the events raised to it. */
function isActive(status: RuntimeStatus): boolean {
  return status === "Pending" || status === "Running" || status === "Suspended";
}

/** The SDK reports HTTP answers of the extension as errors whose message names the status. */
function isStatus(error: unknown, status: number): boolean {
  return error instanceof Error && error.message.includes(`HTTP ${status}`);
}
