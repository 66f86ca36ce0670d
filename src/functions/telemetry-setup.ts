/**
 * Imported first by the entry point, so telemetry is registered before any other module loads (the
 * Azure Monitor distro asks for that). In Azure, the distro (the Bicep sets its connection string), sending
 * with the app's managed identity; under `func start` without it, an OTLP collector when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set. Either registers the global providers, which the handlers' telemetry
 * asks; with either, each invocation's handler runs in the context of the host's span of it.
 */
import { app } from "@azure/functions";
import { startAzureMonitor } from "../adapters/telemetry/azure-monitor.js";
import { runInvocationsInHostTrace } from "../adapters/telemetry/invocation-trace.js";
import { startOtlpTelemetry } from "../adapters/telemetry/otlp-sdk.js";
import { loadOtlpSettings } from "../config/telemetry-settings.js";
import { INSTRUMENTATION_SCOPE } from "../telemetry/telemetry.js";

function startTelemetry(): boolean {
  if (startAzureMonitor(process.env)) return true;
  const otlp = loadOtlpSettings(process.env, INSTRUMENTATION_SCOPE);
  if (otlp) startOtlpTelemetry(otlp);
  return otlp !== undefined;
}

if (startTelemetry()) runInvocationsInHostTrace(app.hook);
