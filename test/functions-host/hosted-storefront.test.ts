/**
 * The storefront as `sas host` starts it: its settings made from the app's, checked by the storefront's
 * own loader, and a taken port reported as such, whether found before start-up or by the listen itself.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../laptop/cli/main.js";
import {
  checkStorePort,
  hostedStorefrontSettings,
  StorePortTakenError,
  startHostedStorefront,
} from "../../laptop/functions-host/hosted-storefront.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { SettingsError } from "../../src/config/settings.js";
import { DEFAULT_LIMITS } from "../../storefront/limits.js";

const STAND_IN =
  "Endpoint=sb://localhost:5999;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true;";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function heldPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return typeof address === "object" && address ? address.port : 0;
}

function folder(): string {
  const path = mkdtempSync(join(tmpdir(), "hosted-storefront-"));
  cleanups.push(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

describe("the storefront under sas host", () => {
  it("uses the app's Service Bus connection, the app's orders queue and its own status queue", () => {
    const settings = hostedStorefrontSettings(
      { ServiceBusConnection: STAND_IN, ORDERS_QUEUE: "elsewhere" },
      { port: 7080, host: "127.0.0.1", data: "/data/host" },
    );
    expect(settings).toEqual({
      serviceBus: { kind: "connectionString", connectionString: STAND_IN },
      ordersQueue: "orders",
      statusQueue: "storefront-status",
      data: join("/data/host", "storefront"),
      port: 7080,
      host: "127.0.0.1",
      limits: DEFAULT_LIMITS,
    });
    const identity = hostedStorefrontSettings(
      { ServiceBusConnection__fullyQualifiedNamespace: "shop.servicebus.windows.net" },
      { port: 0, host: "::1", data: "d" },
    );
    expect(identity.serviceBus).toEqual({
      kind: "identity",
      fullyQualifiedNamespace: "shop.servicebus.windows.net",
    });
  });

  it("refuses app settings without a Service Bus connection, as a settings error naming it", () => {
    const refuse = () => hostedStorefrontSettings({}, { port: 7080, host: "127.0.0.1", data: "d" });
    expect(refuse).toThrow(SettingsError);
    expect(refuse).toThrow(/storefront: Service Bus connection: set ServiceBusConnection/);
  });

  it("reports a taken port before start-up, and from the listen itself, naming the port", async () => {
    const port = await heldPort();
    const settings = hostedStorefrontSettings(
      { ServiceBusConnection: STAND_IN },
      { port, host: "127.0.0.1", data: folder() },
    );
    await expect(checkStorePort(settings)).rejects.toThrow(StorePortTakenError);
    const late = await startHostedStorefront(settings, new MemoryLogger()).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(StorePortTakenError);
    expect(String(late)).toContain(`the storefront's port ${port} on 127.0.0.1 is already in use`);
    await expect(checkStorePort({ ...settings, port: 0 })).resolves.toBeUndefined();
  });

  it("starts on a free port and stops", async () => {
    const settings = hostedStorefrontSettings(
      { ServiceBusConnection: STAND_IN },
      { port: 0, host: "127.0.0.1", data: folder() },
    );
    const storefront = await startHostedStorefront(settings, new MemoryLogger());
    const catalogue = await fetch(`${storefront.url}/api/catalogue`);
    expect(catalogue.status).toBe(200);
    await storefront.close();
    await expect(fetch(`${storefront.url}/api/catalogue`)).rejects.toThrow();
  });
});

describe("sas host's storefront flags", () => {
  it.each([
    [["--no-store", "--store-port", "7081"], "give --store-port or --no-store, not both"],
    [["--port", "7090", "--store-port", "7090"], "--store-port 7090 is the functions' port (--port)"],
    [["--store-port", "65536"], "--store-port must be an integer from 0 to 65535"],
  ])(
    "refuses %j in one line pointing to --help, exit 2, before starting anything",
    async (flags, message) => {
      let stderr = "";
      vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
        stderr += String(chunk);
        return true;
      });
      try {
        expect(await main(["host", ...flags])).toBe(2);
      } finally {
        vi.restoreAllMocks();
      }
      const [first, second, ...rest] = stderr.trimEnd().split("\n");
      expect(first).toContain(`sas host: ${message}`);
      expect(second).toBe("run 'sas host --help' for its flags");
      expect(rest).toEqual([]);
    },
  );
});
