import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../storefront/limits.js";
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
      limits: { ordersPerMinute: 300, visitorOrdersPerMinute: 20, streams: 500, visitorStreams: 20 },
    });
    expect(DEFAULT_LIMITS).toEqual(loadStorefrontSettings({ ServiceBusConnection: CONNECTION }).limits);
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

  it("F24-6: reads the limits on orders and event streams, and names each that is wrong", () => {
    const settings = loadStorefrontSettings({
      ServiceBusConnection: CONNECTION,
      STOREFRONT_MAX_ORDERS_PER_MINUTE: "60",
      STOREFRONT_MAX_VISITOR_ORDERS_PER_MINUTE: "5",
      STOREFRONT_MAX_STREAMS: "100",
      STOREFRONT_MAX_VISITOR_STREAMS: "4",
    });
    expect(settings.limits).toEqual({
      ordersPerMinute: 60,
      visitorOrdersPerMinute: 5,
      streams: 100,
      visitorStreams: 4,
    });
    const wrong = () =>
      loadStorefrontSettings({
        ServiceBusConnection: CONNECTION,
        STOREFRONT_MAX_ORDERS_PER_MINUTE: "10",
        STOREFRONT_MAX_VISITOR_ORDERS_PER_MINUTE: "50",
        STOREFRONT_MAX_STREAMS: "lots",
        STOREFRONT_MAX_VISITOR_STREAMS: "0",
      });
    expect(wrong).toThrow('STOREFRONT_MAX_STREAMS must be a whole number; got "lots"');
    expect(wrong).toThrow("STOREFRONT_MAX_VISITOR_STREAMS must be an integer from 1 to 100,000; got 0");
    expect(wrong).toThrow(
      "STOREFRONT_MAX_VISITOR_ORDERS_PER_MINUTE (50) must not exceed STOREFRONT_MAX_ORDERS_PER_MINUTE (10)",
    ); // A total lowered alone takes the visitor's limit down with it.
    const lowered = loadStorefrontSettings({ ServiceBusConnection: CONNECTION, STOREFRONT_MAX_STREAMS: "5" });
    expect(lowered.limits).toMatchObject({ streams: 5, visitorStreams: 5 });
  });
});
