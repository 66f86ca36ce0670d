import { describe } from "vitest";
import { startHttpApi } from "../../laptop/embedded/http-api.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import { type OperatorApiHost, operatorApiContract } from "../contracts/operator-api.contract.js";
import { openIdlePipeline } from "../support/idle-pipeline.js";

/** The embedded host's pipeline, not started until a test needs its consumers, serving its own backend. */
async function embeddedHost(): Promise<OperatorApiHost> {
  const { pipeline, clock, logger, close } = await openIdlePipeline();
  const api = await startHttpApi({ port: 0, logger, backend: pipeline.apiBackend() });
  const get = async (path: string) => {
    const response = await fetch(`${api.url}${path}`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    states: pipeline.states,
    clock,
    queue: (name) => pipeline.queue(name),
    deadLetterQueues: ["orders", "agent-requests", "agent-responses"],
    supervisorHolder: "embedded-supervisor",
    async command(command, encodedId, body) {
      const response = await fetch(`${api.url}/api/orders/${encodedId}/${command}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    list: (query) => get(`/api/orders?${query}`),
    stats: () => get("/api/stats"),
    history: (encodedId) => get(`/api/orders/${encodedId}/history`),
    async submitMessage(body) {
      // The orders queue's consumer runs submission, which dead-letters what it refuses with its reason.
      pipeline.start();
      await pipeline.post(body as JsonValue);
      await pipeline.idle();
    },
    runSupervisor: async () => void (await pipeline.runSupervisor()),
    async close() {
      await api.close();
      await close();
    },
  };
}

describe("the embedded host's orders API", () => operatorApiContract(embeddedHost));
