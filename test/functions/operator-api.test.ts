import { describe } from "vitest";
import { FUNCTION_NAMES } from "../../src/functions/function-names.js";
import { type OperatorApiHost, operatorApiContract } from "../contracts/operator-api.contract.js";
import { AppUnderTest } from "../support/azure-app-under-test.js";

const FUNCTION_OF = { resubmit: FUNCTION_NAMES.resubmitOrder, compensate: FUNCTION_NAMES.compensateOrder };

/** The Functions app's registered functions, called as the host calls them. */
async function functionsHost(): Promise<OperatorApiHost> {
  const app = new AppUnderTest();
  await app.open();
  const get = async (name: string, path: string) => {
    const answer = (await app.invoke(name, { url: `http://localhost:7071${path}` })) as {
      status: number;
      jsonBody: Record<string, unknown>;
    };
    return { status: answer.status, body: answer.jsonBody };
  };
  let messages = 0;
  return {
    states: app.states,
    clock: app.clock,
    queue: app.queue,
    deadLetterQueues: ["orders", "agent-requests", "agent-responses", "invalid-messages"],
    supervisorHolder: "test-worker",
    async command(command, encodedId, body) {
      const answer = (await app.invoke(FUNCTION_OF[command], {
        url: `http://localhost:7071/api/orders/${encodedId}/${command}`,
        headers: new Headers({ "content-length": String(Buffer.byteLength(body)) }),
        text: async () => body,
      })) as { status: number; jsonBody: Record<string, unknown> };
      return { status: answer.status, body: answer.jsonBody };
    },
    list: (query) => get(FUNCTION_NAMES.listOrders, `/api/orders?${query}`),
    stats: () => get(FUNCTION_NAMES.getStats, "/api/stats"),
    history: (encodedId) => get(FUNCTION_NAMES.getOrderHistory, `/api/orders/${encodedId}/history`),
    async submitMessage(body) {
      // The Service Bus trigger cannot dead-letter: a refused message is moved to invalid-messages.
      await app.invoke(FUNCTION_NAMES.submitOrder, body, { messageId: `m-${++messages}`, deliveryCount: 1 });
    },
    runSupervisor: async () => void (await app.invoke(FUNCTION_NAMES.supervisor, {})),
    close: () => app.close(),
  };
}

describe("the Functions app's orders API", () => operatorApiContract(functionsHost));
