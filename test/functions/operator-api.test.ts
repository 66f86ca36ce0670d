import { describe } from "vitest";
import { FUNCTION_NAMES } from "../../src/functions/function-names.js";
import { type OperatorApiHost, operatorApiContract } from "../contracts/operator-api.contract.js";
import { AppUnderTest } from "../support/azure-app-under-test.js";

const FUNCTION_OF = { resubmit: FUNCTION_NAMES.resubmitOrder, compensate: FUNCTION_NAMES.compensateOrder };

/** The Functions app's registered HTTP functions, called as the host calls them. */
async function functionsHost(): Promise<OperatorApiHost> {
  const app = new AppUnderTest();
  await app.open();
  return {
    states: app.states,
    async command(command, encodedId, body) {
      const answer = (await app.invoke(FUNCTION_OF[command], {
        url: `http://localhost:7071/api/orders/${encodedId}/${command}`,
        headers: new Headers({ "content-length": String(Buffer.byteLength(body)) }),
        text: async () => body,
      })) as { status: number; jsonBody: Record<string, unknown> };
      return { status: answer.status, body: answer.jsonBody };
    },
    async list(query) {
      const answer = (await app.invoke(FUNCTION_NAMES.listOrders, {
        url: `http://localhost:7071/api/orders?${query}`,
      })) as { status: number; jsonBody: Record<string, unknown> };
      return { status: answer.status, body: answer.jsonBody };
    },
    async stats() {
      const answer = (await app.invoke(FUNCTION_NAMES.getStats, {
        url: "http://localhost:7071/api/stats",
      })) as {
        status: number;
        jsonBody: Record<string, unknown>;
      };
      return { status: answer.status, body: answer.jsonBody };
    },
    async history(encodedId) {
      const answer = (await app.invoke(FUNCTION_NAMES.getOrderHistory, {
        url: `http://localhost:7071/api/orders/${encodedId}/history`,
      })) as { status: number; jsonBody: Record<string, unknown> };
      return { status: answer.status, body: answer.jsonBody };
    },
    close: () => app.close(),
  };
}

describe("the Functions app's orders API", () => operatorApiContract(functionsHost));
