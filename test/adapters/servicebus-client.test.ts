import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { RetryMode } from "@azure/service-bus";
import { beforeEach, describe, expect, it, vi } from "vitest";
import {
  createServiceBusClient,
  SERVICE_BUS_RETRIES,
} from "../../src/adapters/servicebus/service-bus-client.js";

/** Constructor arguments of every client built: enough to tell which authentication was chosen. */
const built = vi.hoisted(() => [] as unknown[][]);

vi.mock("@azure/service-bus", async (importOriginal) => {
  const original = await importOriginal<typeof import("@azure/service-bus")>();
  class RecordingClient {
    constructor(...args: unknown[]) {
      built.push(args);
    }
  }
  return { ...original, ServiceBusClient: RecordingClient };
});

const EMULATOR =
  "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
const NAMESPACE = "sas-demo.servicebus.windows.net";

describe("createServiceBusClient", () => {
  beforeEach(() => {
    built.length = 0;
  });

  it("uses a connection string when one is given, with the options given over its own retries", () => {
    const clientOptions = { identifier: "sender", retryOptions: { maxRetries: 1 } };
    createServiceBusClient({ connectionString: EMULATOR }, { clientOptions });
    expect(built).toEqual([
      [EMULATOR, { identifier: "sender", retryOptions: { ...SERVICE_BUS_RETRIES, maxRetries: 1 } }],
    ]);
  });

  it("prefers the connection string when the namespace is set too", () => {
    createServiceBusClient({ connectionString: EMULATOR, fullyQualifiedNamespace: NAMESPACE });
    expect(built).toEqual([[EMULATOR, { retryOptions: SERVICE_BUS_RETRIES }]]);
  });

  it("F24-2: retries within a step's deadline, not the SDK's 60 s tries 30 s apart", () => {
    const credential: TokenCredential = { getToken: vi.fn(async () => null) };
    createServiceBusClient({ fullyQualifiedNamespace: NAMESPACE }, { credential });
    expect(built[0]?.[2]).toEqual({
      retryOptions: {
        mode: RetryMode.Exponential,
        maxRetries: 2,
        retryDelayInMs: 500,
        maxRetryDelayInMs: 2_000,
        timeoutInMs: 5_000,
      },
    });
  });

  it("connects by identity to a fully qualified namespace, with DefaultAzureCredential by default", () => {
    createServiceBusClient({ fullyQualifiedNamespace: NAMESPACE });
    const [[namespace, credential]] = built as [[unknown, unknown]];
    expect(namespace).toBe(NAMESPACE);
    expect(credential).toBeInstanceOf(DefaultAzureCredential);
  });

  it("uses the credential it is given, and treats a blank connection string as absent", () => {
    const credential: TokenCredential = { getToken: vi.fn(async () => null) };
    createServiceBusClient(
      { connectionString: "  ", fullyQualifiedNamespace: ` ${NAMESPACE} ` },
      { credential },
    );
    expect(built).toEqual([[NAMESPACE, credential, { retryOptions: SERVICE_BUS_RETRIES }]]);
    expect(credential.getToken).not.toHaveBeenCalled();
  });

  it("names both settings when neither is given", () => {
    expect(() => createServiceBusClient({})).toThrow(/connection string or a fully qualified namespace/);
    expect(built).toEqual([]);
  });
});
