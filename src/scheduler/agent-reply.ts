import { parseAgentResponse } from "../domain/agent-messages.js";
import { replyEventName } from "../domain/workflow.js";
import type { DurableClient } from "../ports/durable-client.js";
import type { Logger } from "../ports/logger.js";
import { COMPLETE, type InboundMessage, type MessageDisposition } from "../ports/message-handler.js";

export const INVALID_AGENT_RESPONSE = "InvalidAgentResponse";

/**
 * The response queue's handler: hands each Agent reply to the orchestration instance that asked, as
 * the external event it waits on. A reply for an instance that has finished (the timer won, or a
 * newer attempt took over) is dropped and logged; a duplicated reply is harmless, because a step's
 * wait takes one event and the rest stay unread. The durable client is the one of the invocation that
 * received the message.
 */
export function createAgentReplyHandler(deps: {
  logger: Logger;
}): (message: InboundMessage, durable: DurableClient) => Promise<MessageDisposition> {
  return async (message, durable) => {
    const parsed = parseAgentResponse(message.body);
    if (!parsed.ok) {
      deps.logger.error("agent.reply.invalid", { messageId: message.messageId, error: parsed.error.message });
      return { action: "deadLetter", reason: INVALID_AGENT_RESPONSE, description: parsed.error.message };
    }
    const reply = parsed.value;
    const delivered = await durable.raiseEvent(
      reply.instanceId,
      replyEventName(reply.step, reply.operation),
      reply,
    );
    const fields = {
      orderId: reply.orderId,
      attempt: reply.attempt,
      step: reply.step,
      instanceId: reply.instanceId,
    };
    if (delivered.delivered) deps.logger.info("agent.reply.delivered", fields);
    else deps.logger.warn("agent.reply.dropped", { ...fields, reason: delivered.reason });
    return COMPLETE;
  };
}
