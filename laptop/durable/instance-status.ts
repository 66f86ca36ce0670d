import type { OrchestrationStatus } from "../../src/ports/durable-client.js";
import type { InstanceRow } from "./store-records.js";

export function parsePayload(payload: string | null): unknown {
  return payload === null ? undefined : JSON.parse(payload);
}

export function toStatus(row: InstanceRow): OrchestrationStatus {
  return {
    instanceId: row.instanceId,
    name: row.name,
    runtimeStatus: row.status,
    input: parsePayload(row.input),
    output: parsePayload(row.output),
    customStatus: parsePayload(row.customStatus),
    failure: row.failure ?? undefined,
    createdTime: new Date(row.createdAt),
    lastUpdatedTime: new Date(row.updatedAt),
  };
}
