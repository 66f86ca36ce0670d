import { describe, expect, it } from "vitest";
import { loadStorefrontSettings } from "../../storefront/settings.js";

const CONNECTION =
  "Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=s;UseDevelopmentEmulator=true";

describe("the stand-alone storefront's settings", () => {
  it("takes a connection string and defaults the rest", () => {
    expect(loadStorefrontSettings({ ServiceBusConnection: CONNECTION })).toEqual({
      serviceBus: { kind: "connectionString", connectionString: CONNECTION },
      ordersQueue: "orders",
      statusQueue: "storefront-status",
      data: ".data/storefront",
      port: 7080,
      host: "0.0.0.0",
    });
  });

  it("takes a namespace for the managed identity, as in Azure", () => {
    const settings = loadStorefrontSettings({
      ServiceBusConnection__fullyQualifiedNamespace: "sas-demo.servicebus.windows.net",
      STOREFRONT_DATA: "/home/data/storefront",
      PORT: "8080",
    });
    expect(settings).toMatchObject({
      serviceBus: { kind: "identity", fullyQualifiedNamespace: "sas-demo.servicebus.windows.net" },
      data: "/home/data/storefront",
      port: 8080,
    });
  });

  it("names every setting that is wrong", () => {
    expect(() => loadStorefrontSettings({})).toThrow(
      "Service Bus connection: set ServiceBusConnection (a connection string) or ServiceBusConnection__fullyQualifiedNamespace",
    );
    const wrong = () =>
      loadStorefrontSettings({
        ServiceBusConnection: CONNECTION,
        STOREFRONT_STATUS_QUEUE: "agent-requests",
        ORDERS_QUEUE: "orders?",
        PORT: "80a",
      });
    expect(wrong).toThrow(/STOREFRONT_STATUS_QUEUE must not name one of the pipeline's own queues/);
    expect(wrong).toThrow(/ORDERS_QUEUE must be a queue name/);
    expect(wrong).toThrow(/PORT must be a port number from 0 to 65535; got "80a"/);
  });
});
