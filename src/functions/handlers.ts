import type { HttpRequest, HttpResponseInit, InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { FunctionsDurableClient, type SdkDurableClient } from "../adapters/functions-host/durable-client.js";
import { inboundFromTrigger } from "../adapters/functions-host/inbound-message.js";
import { runQueueHandler } from "../adapters/functions-host/settle.js";
import { createAgentWorkerHandler, replyMessageId } from "../agents/agent-worker.js";
import { QUEUE_NAMES } from "../config/names.js";
import { agentAmplification } from "../config/settings.js";
import { MAX_ORDER_MESSAGE_BYTES } from "../domain/order.js";
import { createOrderActivities } from "../orchestrators/order-activities.js";
import { ORDER_PROCESSING } from "../orchestrators/order-processing.js";
import type { DurableClient } from "../ports/durable-client.js";
import type { MessageHandler } from "../ports/message-handler.js";
import type { JsonValue } from "../ports/message-queue.js";
import { createAgentReplyHandler } from "../scheduler/agent-reply.js";
import { CoalescedRuns } from "../scheduler/coalesced-runs.js";
import { orderMessageId } from "../scheduler/order-message-id.js";
import { type ApiAnswer, createOrdersApi, orderTooLarge } from "../scheduler/orders-api.js";
import { createStarter } from "../scheduler/starter.js";
import { createSubmissionHandler } from "../scheduler/submission.js";
import { createSupervisor } from "../supervisor/supervisor.js";
import type { AzureServices } from "./azure-services.js";

/**
 * The Azure app's composition: the shared handlers wired to the Azure services, in the shapes the
 * Functions host calls. The registrations under src/functions/ each call one of these; the embedded
 * host wires the very same handler factories to its SQLite stores.
 */
export function createAzureHandlers(services: AzureServices) {
  const { settings, logger, clock } = services;
  const pipeline = settings.pipeline;
  const invalidMessages = services.queue(QUEUE_NAMES.invalidMessages);
  const durableOf = (context: InvocationContext): DurableClient =>
    services.durableClient?.(context) ??
    new FunctionsDurableClient(df.getClient(context) as unknown as SdkDurableClient);

  const consume = async (
    handler: MessageHandler,
    sourceQueue: string,
    message: unknown,
    context: InvocationContext,
  ) => {
    await runQueueHandler(handler, inboundFromTrigger(message, context), {
      sourceQueue,
      invalidMessages,
      logger,
    });
  };

  // One starter run at a time in this worker process, with the durable client of the latest trigger.
  let durable: DurableClient | undefined;
  const starterRuns = new CoalescedRuns(() => {
    if (!durable) throw new Error("the starter ran before any trigger gave it a durable client");
    return createStarter({
      states: services.states,
      durable,
      clock,
      logger,
      orchestrationName: ORDER_PROCESSING,
      attemptTimeoutMs: pipeline.attemptTimeoutMs,
      maxInFlight: pipeline.maxInFlight,
      pageSize: pipeline.starterPageSize,
    })();
  });
  const nudgeStarter = (client: DurableClient): Promise<void> => {
    durable = client;
    return starterRuns.trigger();
  };

  const submission = (onAccepted: () => void) =>
    createSubmissionHandler({
      orders: services.orders,
      states: services.states,
      notifier: services.notifier,
      alerts: services.alerts,
      clock,
      logger,
      retryBudgetPerOrder: pipeline.retryBudgetPerOrder,
      onAccepted,
    });

  const agentWorker = createAgentWorkerHandler({
    agent: services.agent,
    logger,
    reply: async (response) => {
      await services.queue(QUEUE_NAMES.agentResponses).send({
        messageId: replyMessageId(response),
        body: response as unknown as JsonValue,
        correlationId: response.orderId,
      });
    },
  });

  const supervisor = createSupervisor({
    states: services.states,
    lease: services.lease,
    alerts: services.alerts,
    notifier: services.notifier,
    clock,
    random: services.random,
    logger,
    holder: services.instanceName,
    policy: pipeline.recovery,
    windowMs: pipeline.supervisorWindowMs,
    pageSize: pipeline.supervisorPageSize,
    maxPages: pipeline.supervisorMaxPages,
    leaseMs: pipeline.supervisorLeaseMs,
  });

  const ordersApi = createOrdersApi({
    logger,
    backend: {
      post: (body) => services.queue(QUEUE_NAMES.orders).send({ messageId: orderMessageId(body), body }),
      getRecord: (orderId) => services.states.get(orderId),
    },
  });

  return {
    activities: createOrderActivities({
      states: services.states,
      orders: services.orders,
      notifier: services.notifier,
      alerts: services.alerts,
      clock,
      logger,
      agent: services.agent,
      sendAgentRequest: async (request) => {
        await services.queue(QUEUE_NAMES.agentRequests).send({
          messageId: request.requestId,
          body: request as unknown as JsonValue,
        });
      },
      settings: {
        stepTimeoutMs: pipeline.stepTimeoutMs,
        agentCallsPerStep: pipeline.agentCallsPerStep,
        agentAmplification: agentAmplification(pipeline),
        agentMode: pipeline.agentMode,
      },
    }),

    /** Orders queue: submission, then a nudge to the starter for what it accepted. */
    async submitOrder(message: unknown, context: InvocationContext): Promise<void> {
      let accepted = false;
      await consume(
        submission(() => {
          accepted = true;
        }),
        QUEUE_NAMES.orders,
        message,
        context,
      );
      if (accepted) await nudgeStarter(durableOf(context));
    },

    async runStarter(_timer: unknown, context: InvocationContext): Promise<void> {
      await nudgeStarter(durableOf(context));
    },

    async runSupervisor(): Promise<void> {
      await supervisor();
    },

    async agentWorker(message: unknown, context: InvocationContext): Promise<void> {
      await consume(agentWorker, QUEUE_NAMES.agentRequests, message, context);
    },

    async agentReplies(message: unknown, context: InvocationContext): Promise<void> {
      const handler = createAgentReplyHandler({ durable: durableOf(context), logger });
      await consume(handler, QUEUE_NAMES.agentResponses, message, context);
    },

    async postOrder(request: HttpRequest): Promise<HttpResponseInit> {
      const declared = Number(request.headers.get("content-length") ?? 0);
      if (declared > MAX_ORDER_MESSAGE_BYTES) return toResponse(orderTooLarge());
      const text = await request.text();
      if (Buffer.byteLength(text) > MAX_ORDER_MESSAGE_BYTES) return toResponse(orderTooLarge());
      return toResponse(await ordersApi.postOrder(text));
    },

    async getOrder(request: HttpRequest): Promise<HttpResponseInit> {
      // The raw path segment: route parameters arrive decoded, and the API decodes (and checks) it itself.
      const segment = new URL(request.url).pathname.split("/").pop() ?? "";
      return toResponse(await ordersApi.getOrder(segment));
    },
  };
}

export type AzureHandlers = ReturnType<typeof createAzureHandlers>;

function toResponse(answer: ApiAnswer): HttpResponseInit {
  return {
    status: answer.status,
    jsonBody: answer.body,
    ...(answer.headers ? { headers: { ...answer.headers } } : {}),
  };
}
