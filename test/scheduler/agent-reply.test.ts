import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import type { AgentResponse } from "../../src/domain/agent-messages.js";
import type { DurableClient, RaiseEventResult } from "../../src/ports/durable-client.js";
import type { InboundMessage } from "../../src/ports/message-handler.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import { createAgentReplyHandler, INVALID_AGENT_RESPONSE } from "../../src/scheduler/agent-reply.js";

const reply: AgentResponse = {
  schemaVersion: 2,
  requestId: "ord-1:1:reserveInventory",
  orderId: "ord-1",
  attempt: 1,
  step: "reserveInventory",
  operation: "do",
  instanceId: "ord-1:1",
  outcome: "succeeded",
  reference: "res-1",
  fault: null,
  callsMade: 1,
  completedAt: "2026-01-01T00:00:00.000Z",
};

/** A durable client that records the events raised and delivers them all. */
function recordingClient(): { client: DurableClient; raised: string[] } {
  const raised: string[] = [];
  const refuse = () => Promise.reject(new Error("not used here"));
  const client: DurableClient = {
    raiseEvent: async (instanceId, eventName): Promise<RaiseEventResult> => {
      raised.push(`${instanceId} ${eventName}`);
      return { delivered: true };
    },
    startNew: refuse,
    getStatus: refuse,
    terminate: refuse,
    purge: refuse,
    listFinished: refuse,
  };
  return { client, raised };
}

function message(body: AgentResponse): InboundMessage {
  return {
    messageId: "reply-1",
    body: body as unknown as JsonValue,
    deliveryCount: 1,
    enqueuedTime: new Date(0),
    correlationId: undefined,
    applicationProperties: {},
  };
}

describe("the Agent reply handler", () => {
  it("raises a reply as its instance's event for the step", async () => {
    const { client, raised } = recordingClient();
    const handle = createAgentReplyHandler({ logger: new MemoryLogger() });
    expect(await handle(message(reply), client)).toEqual({ action: "complete" });
    expect(raised).toEqual(["ord-1:1 reply:reserveInventory:do"]);
  });

  it("dead-letters a reply that names a waiting instance under another order's identity, raising nothing", async () => {
    const { client, raised } = recordingClient();
    const handle = createAgentReplyHandler({ logger: new MemoryLogger() });
    const forged = { ...reply, orderId: "ord-2", requestId: "ord-2:1:reserveInventory" };
    expect(await handle(message(forged), client)).toEqual({
      action: "deadLetter",
      reason: INVALID_AGENT_RESPONSE,
      description: expect.stringContaining("instanceId: must be the instance of the order's attempt"),
    });
    const otherAttempt = { ...reply, attempt: 2 };
    expect(await handle(message(otherAttempt), client)).toMatchObject({ action: "deadLetter" });
    expect(raised).toEqual([]);
  });
});
