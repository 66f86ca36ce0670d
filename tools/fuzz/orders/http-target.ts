import { startHttpApi } from "../../../laptop/embedded/http-api.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import { orderMessageId } from "../../../src/scheduler/order-message-id.js";
import { DeadLetterCursor } from "../dead-letters.js";
import type { FuzzTarget } from "../target.js";
import { OrderCaseRunner } from "./case-runner.js";
import { openEmbeddedOrders, type SubmissionFactory } from "./embedded.js";
import { post } from "./http-post.js";
import type { Observed } from "./judge.js";
import { type OrderCase, orderCase } from "./order-case.js";
import { settled } from "./sqlite-queue-target.js";
import { httpBody, type Submission } from "./submission.js";

/** Order messages posted to `POST /api/orders` on the embedded host's HTTP API, then consumed from its queue. */
export function httpTarget(options: { readonly submission?: SubmissionFactory } = {}): FuzzTarget<OrderCase> {
  return {
    name: "orders: HTTP API",
    arbitrary: orderCase({ http: true }),
    open: async () => {
      const embedded = await openEmbeddedOrders(options.submission);
      const api = await startHttpApi({
        backend: embedded.pipeline.apiBackend(),
        logger: embedded.log.logger,
        port: 0,
      });
      const deadLetters = new DeadLetterCursor(embedded.pipeline.ordersQueue.deadLetterQueue);
      // The queue drops a message whose id it has seen; the ids are derived from the body.
      const queuedIds = new Set<string>();
      const channel = {
        async send(submission: Submission): Promise<Observed> {
          const body = httpBody(submission.wire);
          const headers = submission.traceparent === null ? {} : { traceparent: submission.traceparent };
          const answer = await post(`${api.url}/api/orders`, body, { chunked: submission.chunked, headers });
          let queued = false;
          if (answer.status === 202) {
            const id = orderMessageId(JSON.parse(new TextDecoder().decode(toBytes(body))) as JsonValue);
            queued = !queuedIds.has(id);
            queuedIds.add(id);
          }
          return settled(embedded, queued, answer, deadLetters);
        },
      };
      const runner = new OrderCaseRunner(embedded.stores, channel);
      return {
        run: (value, tally) => runner.run(value, tally),
        close: async () => {
          await api.close();
          await embedded.close();
        },
      };
    },
  };
}

function toBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? new TextEncoder().encode(body) : body;
}
