import type { IncomingMessage, ServerResponse } from "node:http";
import { hostname } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import type { Clock } from "../../src/ports/clock.js";
import type { Logger } from "../../src/ports/logger.js";
import { LocalDurableRuntime } from "../durable/local-durable-runtime.js";
import { buildExtensionHost } from "../extension-host/extension-build.js";
import { startExtensionHost } from "../extension-host/extension-process.js";
import { superviseExtensionHost } from "../extension-host/extension-supervisor.js";
import { webhookProxy } from "../extension-host/webhook-proxy.js";
import type { BindingData } from "../worker/invocation-context.js";
import type { FunctionRegistry } from "../worker/registration-capture.js";
import { startDurableExtensionApi } from "./durable-extension-api.js";
import type { HostJson } from "./host-config.js";
import { DURABLE_WEBHOOKS } from "./http-triggers.js";

/** The two engines `sas host` runs the app's orchestrations on (`--durable`). */
export const DURABLE_ENGINES = ["extension", "local"] as const;
export type DurableEngineName = (typeof DURABLE_ENGINES)[number];

/** A running durable engine, as the rest of the host sees it. */
export interface DurableEngine {
  /** The data each durable client input gets: the extension's binding data, pointing at its API. */
  readonly bindingData: BindingData;
  /** Serves the extension's webhooks (the management links) once the host has checked their key. */
  readonly webhooks: (req: IncomingMessage, res: ServerResponse) => void;
  /** The start-up banner's line about it. */
  readonly note: string;
  close(): Promise<void>;
}

export interface DurableEngineOptions {
  readonly registry: FunctionRegistry;
  readonly appRoot: string;
  readonly data: string;
  readonly hostJson: HostJson;
  /** The extension's system key, which the management links carry as `code`. */
  readonly webhookKey: string;
  /** The origin sas host serves HTTP on, where the management links point. */
  readonly origin: string;
  /** The app's settings, with the stand-ins'. */
  readonly settings: Readonly<Record<string, string>>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** A line to show the user while it starts (a first build). */
  readonly say: (line: string) => void;
  /** Where the extension host's log lines go; default this process's standard error. */
  readonly log?: NodeJS.WritableStream;
  /** The engine stopped for good (the extension host's process kept ending, or would not start again). */
  readonly onFailure: (error: Error) => void;
}

export function startDurableEngine(
  name: DurableEngineName,
  options: DurableEngineOptions,
): Promise<DurableEngine> {
  return name === "extension" ? startExtensionEngine(options) : startLocalEngine(options);
}

/**
 * The local durable runtime (`laptop/durable/`) on `<data>/durable.db`, behind a server of the
 * extension's HTTP API answered from it.
 */
async function startLocalEngine(options: DurableEngineOptions): Promise<DurableEngine> {
  const { hostJson } = options;
  const api = await startDurableExtensionApi({
    taskHubName: hostJson.hubName,
    webhookKey: options.webhookKey,
    overridableExistingInstanceStates: hostJson.overridableExistingInstanceStates,
  });
  const bindingData: BindingData = (binding) =>
    binding.type === "durableClient" ? api.clientData : undefined;
  const file = join(options.data, "durable.db");
  const db = openDatabase(file);
  let runtime: LocalDurableRuntime;
  try {
    runtime = LocalDurableRuntime.open({
      db,
      clock: options.clock,
      registry: options.registry,
      logger: options.logger,
      maxConcurrentActivities: hostJson.maxConcurrentActivityFunctions,
      replaySessions: true,
      bindingData,
    });
  } catch (error) {
    db.close();
    await api.close();
    throw error;
  }
  api.attach(runtime);
  return {
    bindingData,
    webhooks: api.handle,
    note: `durable: the local durable runtime (laptop/durable), task hub ${hostJson.hubName}, its store ${file}`,
    close: async () => {
      await runtime.close();
      db.close();
      await api.close();
    },
  };
}

/**
 * Microsoft's Durable Task extension in the extension host (`laptop/extension-host/`), built on first
 * use, on the Azure Storage backend of the app's `AzureWebJobsStorage` (Azurite, on this machine), with
 * host.json's `extensions.durableTask` applied by the extension itself.
 */
async function startExtensionEngine(options: DurableEngineOptions): Promise<DurableEngine> {
  const build = await buildExtensionHost(options.say).catch((error: unknown) => {
    throw new Error(
      `${(error as Error).message}\n(sas host --durable local runs on the local durable runtime instead)`,
    );
  });
  const host = await superviseExtensionHost({
    start: (onExit) =>
      startExtensionHost({
        dll: build.dll,
        registry: options.registry,
        hostJsonPath: join(options.appRoot, "host.json"),
        webhookUrl: `${options.origin}${DURABLE_WEBHOOKS.slice(0, -1)}?code=${encodeURIComponent(options.webhookKey)}`,
        settings: options.settings,
        // Unique per port on this machine, and the same again after a restart on it.
        workerId: `${hostname()}:${new URL(options.origin).port}`,
        logger: options.logger,
        ...(options.log ? { log: options.log } : {}),
        onExit,
      }),
    clock: options.clock,
    logger: options.logger,
    onGiveUp: options.onFailure,
  });
  const { ready } = host;
  // A restarted host may listen on another port: each invocation and request reads the one that runs.
  const bindingData: BindingData = (binding) =>
    binding.type === "durableClient" ? host.ready.clientData : undefined;
  return {
    bindingData,
    webhooks: (req, res) => webhookProxy(host.ready.clientData.rpcBaseUrl)(req, res),
    note:
      `durable: Microsoft.Azure.WebJobs.Extensions.DurableTask ${ready.extensionVersion} (DurableTask.Core ` +
      `${ready.coreVersion}, DurableTask.AzureStorage ${ready.azureStorageVersion}), task hub ${ready.hubName} ` +
      `on the Azure Storage backend (AzureWebJobsStorage), ${ready.maxConcurrentOrchestratorFunctions} ` +
      `orchestrator and ${ready.maxConcurrentActivityFunctions} activity functions at once, its API on ` +
      ready.clientData.rpcBaseUrl,
    close: () => host.close(),
  };
}
