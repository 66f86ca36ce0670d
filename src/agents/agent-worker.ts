import { type AgentRequest, type AgentResponse, parseAgentRequest } from "../domain/agent-messages.js";
import type { Logger } from "../ports/logger.js";
import { COMPLETE, type MessageHandler } from "../ports/message-handler.js";

export interface AgentWorkerDeps {
  readonly agent: (request: AgentRequest) => Promise<AgentResponse>;
  /** Puts the reply on the response queue; its message id is stable, so a resend is a duplicate. */
  readonly reply: (response: AgentResponse) => Promise<void>;
  readonly logger: Logger;
}

export const INVALID_AGENT_REQUEST = "InvalidAgentRequest";

/** The reply's message id: stable per request, so a worker that answers twice sends a duplicate. */
export function replyMessageId(response: AgentResponse): string {
  return `${response.requestId}:reply`;
}

/**
 * The Agent's queue form: a worker behind a request queue, answering on a response queue. It does
 * the same work as the activity form. A crash mid-call redelivers the request, which the broker's
 * delivery count bounds and the Scheduler's budget has already charged for.
 */
export function createAgentWorkerHandler(deps: AgentWorkerDeps): MessageHandler {
  return async (message) => {
    const parsed = parseAgentRequest(message.body);
    if (!parsed.ok) {
      deps.logger.error("agent.request.invalid", {
        messageId: message.messageId,
        error: parsed.error.message,
      });
      return { action: "deadLetter", reason: INVALID_AGENT_REQUEST, description: parsed.error.message };
    }
    const response = await deps.agent(parsed.value);
    await deps.reply(response);
    return COMPLETE;
  };
}
