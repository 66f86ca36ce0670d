import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import { LocalDurableRuntime } from "../../laptop/durable/local-durable-runtime.js";
import { buildExtensionHost } from "../../laptop/extension-host/extension-build.js";
import { type ExtensionHost, startExtensionHost } from "../../laptop/extension-host/extension-process.js";
import { startDurableExtensionApi } from "../../laptop/functions-host/durable-extension-api.js";
import { startAzuriteStorage } from "../../laptop/stand-ins/azurite.js";
import type { FunctionRegistry } from "../../laptop/worker/registration-capture.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";

/** One engine running an app, and the SDK's client on it (the binding data a durable client input gets). */
export interface EngineUnderTest {
  readonly name: "local" | "extension";
  readonly client: df.DurableClient;
  readonly clientData: unknown;
  readonly logger: MemoryLogger;
  close(): Promise<void>;
}

/** The SDK's client as `df.getClient` makes it for an invocation whose durable client input has `data`. */
export function sdkClient(data: unknown): df.DurableClient {
  const binding = df.input.durableClient();
  const context = new azureFunctions.InvocationContext({
    functionName: "differential",
    options: { extraInputs: [binding] },
  });
  context.extraInputs.set(binding, data);
  return df.getClient(context);
}

/** The local durable runtime on the system clock, behind its server of the extension's HTTP API. */
export async function startLocalEngine(registry: FunctionRegistry): Promise<EngineUnderTest> {
  const logger = new MemoryLogger();
  const db = openDatabase(":memory:");
  const runtime = LocalDurableRuntime.open({ db, clock: new SystemClock(), registry, logger });
  const api = await startDurableExtensionApi({ runtime });
  return {
    name: "local",
    client: sdkClient(api.clientData),
    clientData: api.clientData,
    logger,
    close: async () => {
      await api.close();
      await runtime.close();
      db.close();
    },
  };
}

/**
 * Microsoft's extension in the extension host, on Azurite's Azure Storage of its own, with a host.json
 * that names the hub and lets an idle queue's polling back off to a second at most.
 */
export async function startExtensionEngine(
  registry: FunctionRegistry,
  hubName: string,
): Promise<EngineUnderTest> {
  const logger = new MemoryLogger();
  const folder = mkdtempSync(join(tmpdir(), "sas-extension-engine-"));
  const hostJsonPath = join(folder, "host.json");
  writeFileSync(
    hostJsonPath,
    JSON.stringify({
      version: "2.0",
      extensions: { durableTask: { hubName, storageProvider: { maxQueuePollingInterval: "00:00:01" } } },
      logging: { logLevel: { default: "Warning" } },
    }),
  );
  const azurite = await startAzuriteStorage({ location: join(folder, "azurite") });
  let host: ExtensionHost | undefined;
  const close = async () => {
    await host?.close();
    await azurite.stop();
    rmSync(folder, { recursive: true, force: true, maxRetries: 10 });
  };
  try {
    const build = await buildExtensionHost();
    host = await startExtensionHost({
      dll: build.dll,
      registry,
      hostJsonPath,
      webhookUrl: "http://127.0.0.1:9/runtime/webhooks/durabletask?code=unused",
      settings: { AzureWebJobsStorage: azurite.connectionString },
      logger,
      log: new PassThrough().resume(),
    });
  } catch (error) {
    await close();
    throw error;
  }
  const { clientData } = host.ready;
  return { name: "extension", client: sdkClient(clientData), clientData, logger, close };
}
