import { describe } from "vitest";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { SqliteStateStore } from "../../src/adapters/sqlite/sqlite-state-store.js";
import { startHttpApi } from "../../src/local/http-api.js";
import { type OperatorApiHost, operatorApiContract } from "../contracts/operator-api.contract.js";
import { storeBackend } from "../support/store-backend.js";

async function embeddedHost(): Promise<OperatorApiHost> {
  const db = openDatabase(":memory:");
  const states = new SqliteStateStore(db);
  const logger = new MemoryLogger();
  const api = await startHttpApi({
    port: 0,
    logger,
    backend: storeBackend(states, logger),
  });
  return {
    states,
    async command(command, encodedId, body) {
      const response = await fetch(`${api.url}/api/orders/${encodedId}/${command}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async list(query) {
      const response = await fetch(`${api.url}/api/orders?${query}`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async stats() {
      const response = await fetch(`${api.url}/api/stats`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async history(encodedId) {
      const response = await fetch(`${api.url}/api/orders/${encodedId}/history`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async close() {
      await api.close();
      db.close();
    },
  };
}

describe("the embedded host's orders API", () => operatorApiContract(embeddedHost));
