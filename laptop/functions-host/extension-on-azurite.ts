/**
 * Microsoft's extension in the extension host on an Azurite of its own, without the rest of `sas host`:
 * for the differential check and `npm run bench:runtime`. Its host.json names the hub and lets an idle
 * queue's polling back off to a second at most (the default is 30 s), so that a run does not begin by
 * waiting out the back-off the previous one left behind.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import type { Logger } from "../../src/ports/logger.js";
import { buildExtensionHost } from "../extension-host/extension-build.js";
import { type ExtensionHost, startExtensionHost } from "../extension-host/extension-process.js";
import { startAzuriteStorage } from "../stand-ins/azurite.js";
import type { FunctionRegistry } from "../worker/registration-capture.js";

export interface ExtensionOnAzurite {
  readonly host: ExtensionHost;
  /** Azurite's table endpoint (ending with the account), where the task hub's tables are. */
  readonly tableEndpoint: string;
  /** The SDK's durable client on the extension's endpoint. */
  readonly client: df.DurableClient;
  close(): Promise<void>;
}

export async function startExtensionOnAzurite(options: {
  readonly registry: FunctionRegistry;
  readonly hubName: string;
  readonly logger: Logger;
}): Promise<ExtensionOnAzurite> {
  const folder = mkdtempSync(join(tmpdir(), "sas-extension-"));
  const hostJsonPath = join(folder, "host.json");
  const durableTask = { hubName: options.hubName, storageProvider: { maxQueuePollingInterval: "00:00:01" } };
  writeFileSync(
    hostJsonPath,
    JSON.stringify({
      version: "2.0",
      extensions: { durableTask },
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
    host = await startExtensionHost({
      dll: (await buildExtensionHost()).dll,
      registry: options.registry,
      hostJsonPath,
      webhookUrl: "http://127.0.0.1:9/runtime/webhooks/durabletask?code=unused",
      settings: { AzureWebJobsStorage: azurite.connectionString },
      logger: options.logger,
      log: new PassThrough().resume(),
    });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    host,
    tableEndpoint: azurite.tableEndpoint,
    client: durableClientOn(host.ready.clientData),
    close,
  };
}

/** The SDK's client as `df.getClient` makes it for an invocation whose durable client input has `data`. */
export function durableClientOn(data: unknown): df.DurableClient {
  const binding = df.input.durableClient();
  const context = new azureFunctions.InvocationContext({
    functionName: "durableClient",
    options: { extraInputs: [binding] },
  });
  context.extraInputs.set(binding, data);
  return df.getClient(context);
}
