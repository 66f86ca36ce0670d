import type { InvocationContext } from "@azure/functions";
import { createAgentWorkerHandler, replyMessageId } from "../../agents/agent-worker.js";
import { QUEUE_NAMES } from "../../config/names.js";
import type { DurableClient } from "../../ports/durable-client.js";
import type { JsonValue } from "../../ports/message-queue.js";
import { createAgentReplyHandler } from "../../scheduler/agent-reply.js";
import type { AzureServices } from "../azure-services.js";
import { queueTrigger } from "./queue-trigger.js";

/** The Agent's queue form: the request-queue worker, and the reply handler that wakes the orchestration. */
export function createAgentQueueHandlers(
  services: AzureServices,
  deps: { readonly durableOf: (context: InvocationContext) => DurableClient },
) {
  const responses = services.queue(QUEUE_NAMES.agentResponses);
  const worker = queueTrigger(
    services,
    QUEUE_NAMES.agentRequests,
    createAgentWorkerHandler({
      agent: services.agent,
      logger: services.logger,
      reply: async (response) => {
        await responses.send({
          messageId: replyMessageId(response),
          body: response as unknown as JsonValue,
          correlationId: response.orderId,
        });
      },
    }),
  );
  const replies = createAgentReplyHandler({ logger: services.logger });
  const replyTrigger = queueTrigger(services, QUEUE_NAMES.agentResponses, (message, context) =>
    replies(message, deps.durableOf(context)),
  );
  return {
    async agentWorker(message: unknown, context: InvocationContext): Promise<void> {
      await worker(message, context);
    },
    async agentReplies(message: unknown, context: InvocationContext): Promise<void> {
      await replyTrigger(message, context);
    },
  };
}
