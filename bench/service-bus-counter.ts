/**
 * The Service Bus broker stand-in started by the bench itself, with the queues a checkout declares
 * in its infra/queues.json, counting what each queue does for its clients: messages sent, delivered
 * (received under a lock), completed, abandoned and dead-lettered, lock renewals and peek requests.
 * `sas host` uses a broker that already answers where its settings point, so any build's host talks
 * to this one and is counted the same way.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type QueueOperation, ServiceBusStandIn } from "../laptop/stand-ins/servicebus-broker/index.js";
import { isoDurationMs } from "../src/domain/time.js";

export interface ServiceBusCounts {
  /** Operations by `<queue>.<operation>`, each counted per message (a peek per request). */
  readonly byKind: Readonly<Record<string, number>>;
  readonly operations: number;
}

export interface CountingServiceBus {
  readonly connectionString: string;
  counts(): ServiceBusCounts;
  stop(): Promise<void>;
}

interface QueueDefinition {
  readonly name: string;
  readonly lockDuration: string;
  readonly maxDeliveryCount: number;
  readonly duplicateDetectionHistoryTimeWindow: string;
}

export function queueDefinitions(checkout: string): QueueDefinition[] {
  const file = join(checkout, "infra", "queues.json");
  return Object.values(JSON.parse(readFileSync(file, "utf8")) as Record<string, QueueDefinition>);
}

export async function startCountingServiceBus(checkout: string): Promise<CountingServiceBus> {
  const tally = new Map<string, number>();
  const observe = (operation: QueueOperation, queue: string, messages: number) => {
    const kind = `${queue}.${operation}`;
    tally.set(kind, (tally.get(kind) ?? 0) + messages);
  };
  const broker = await ServiceBusStandIn.start({ observe });
  for (const queue of queueDefinitions(checkout)) {
    broker.createQueue(queue.name, {
      lockDurationMs: isoDurationMs(queue.lockDuration),
      maxDeliveryCount: queue.maxDeliveryCount,
      duplicateDetectionWindowMs: isoDurationMs(queue.duplicateDetectionHistoryTimeWindow),
    });
  }
  return {
    connectionString: broker.connectionString,
    counts: () => ({
      byKind: Object.fromEntries(tally),
      operations: [...tally.values()].reduce((sum, n) => sum + n, 0),
    }),
    stop: () => broker.close(),
  };
}
