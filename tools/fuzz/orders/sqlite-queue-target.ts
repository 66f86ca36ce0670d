import { orderQueueMessage } from "../../../src/scheduler/order-message-id.js";
import { breakages } from "../captured-log.js";
import { DeadLetterCursor } from "../dead-letters.js";
import type { FuzzTarget } from "../target.js";
import { OrderCaseRunner } from "./case-runner.js";
import { type EmbeddedOrders, openEmbeddedOrders, type SubmissionFactory } from "./embedded.js";
import type { Observed } from "./judge.js";
import { type OrderCase, orderCase } from "./order-case.js";
import { queueBody, type Submission } from "./submission.js";

/** Order messages put straight on the embedded host's orders queue (SQLite), as `sas demo` posts them. */
export function sqliteQueueTarget(
  options: { readonly submission?: SubmissionFactory } = {},
): FuzzTarget<OrderCase> {
  return {
    name: "orders: SQLite queue",
    arbitrary: orderCase({ http: false }),
    open: async () => {
      const embedded = await openEmbeddedOrders(options.submission);
      const runner = new OrderCaseRunner(embedded.stores, queueChannel(embedded));
      return { run: (value, tally) => runner.run(value, tally), close: () => embedded.close() };
    },
  };
}

function queueChannel(embedded: EmbeddedOrders) {
  const queue = embedded.pipeline.ordersQueue;
  const deadLetters = new DeadLetterCursor(queue.deadLetterQueue);
  return {
    async send(submission: Submission): Promise<Observed> {
      const sent = await queue.send(orderQueueMessage(queueBody(submission.wire), submission.traceparent));
      return settled(embedded, sent.accepted === 1, null, deadLetters);
    },
  };
}

/** Waits until the consumer has handled everything on the queue, then reports what became of it. */
export async function settled(
  embedded: EmbeddedOrders,
  queued: boolean,
  http: Observed["http"],
  deadLetters: DeadLetterCursor,
): Promise<Observed> {
  embedded.consumer.nudge();
  await embedded.consumer.idle();
  const queue = embedded.pipeline.ordersQueue;
  return {
    http,
    queued,
    deadLetters: await deadLetters.newMessages(),
    unsettled: (await queue.peek(10)).length,
    breakages: breakages(embedded.log.take()),
  };
}
