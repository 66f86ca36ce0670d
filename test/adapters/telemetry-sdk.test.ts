import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { trace } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import {
  APPINSIGHTS_SETTING,
  startAzureMonitor,
  stopAzureMonitor,
} from "../../src/adapters/telemetry/azure-monitor.js";
import { startOtlpTelemetry, type TelemetrySdk } from "../../src/adapters/telemetry/otlp-sdk.js";
import { loadOtlpSettings, OTLP_ENDPOINT_SETTING } from "../../src/config/telemetry-settings.js";

let sdk: TelemetrySdk | undefined;
afterEach(async () => {
  await sdk?.shutdown();
  sdk = undefined;
  trace.disable();
});

describe("the OTLP SDK of the embedded host", () => {
  it("stays off without the setting, and refuses a malformed endpoint naming the setting", () => {
    expect(loadOtlpSettings({}, "svc")).toBeUndefined();
    expect(loadOtlpSettings({ [OTLP_ENDPOINT_SETTING]: " " }, "svc")).toBeUndefined();
    expect(() => loadOtlpSettings({ [OTLP_ENDPOINT_SETTING]: "localhost:4318" }, "svc")).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/,
    );
    expect(
      loadOtlpSettings({ [OTLP_ENDPOINT_SETTING]: "http://c:4318", OTEL_SERVICE_NAME: "mine" }, "svc"),
    ).toEqual({
      endpoint: "http://c:4318",
      serviceName: "mine",
    });
  });

  it("sends spans and metrics to the collector the setting names, over OTLP/HTTP", async () => {
    const received: string[] = [];
    const collector = createServer((req, res) => {
      received.push(req.url ?? "");
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    const { port } = collector.address() as AddressInfo;
    try {
      sdk = startOtlpTelemetry({ endpoint: `http://127.0.0.1:${port}`, serviceName: "probe" }, 60_000);
      expect(sdk?.destination).toBe(`OTLP/HTTP at http://127.0.0.1:${port}`);
      const span = sdk?.telemetry.tracer.startSpan("probe");
      expect(span?.isRecording()).toBe(true);
      span?.end();
      sdk?.telemetry.meter.createCounter("probe").add(1);
      await sdk?.shutdown();
      sdk = undefined;
      expect(received.sort()).toEqual(["/v1/metrics", "/v1/traces"]);
    } finally {
      collector.close();
    }
  });
});

describe("the Azure Monitor distro of the Functions app", () => {
  it("registers nothing without a connection string", () => {
    expect(startAzureMonitor({})).toBe(false);
    expect(trace.getTracer("probe").startSpan("probe").isRecording()).toBe(false);
  });

  it("registers the global providers the handlers ask, with the connection string set", async () => {
    const connectionString =
      "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/";
    // The distro samples at most 5 traces a second by default; the standard setting overrides it.
    process.env.OTEL_TRACES_SAMPLER = "always_on";
    expect(startAzureMonitor({ [APPINSIGHTS_SETTING]: connectionString })).toBe(true);
    try {
      expect(trace.getTracer("probe").startSpan("probe").isRecording()).toBe(true);
    } finally {
      delete process.env.OTEL_TRACES_SAMPLER;
      await stopAzureMonitor();
    }
  });
});
