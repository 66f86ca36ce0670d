/**
 * Imported first by the entry point, so telemetry is registered before any other module loads (the
 * Azure Monitor distro asks for that). In Azure, the distro (the Bicep sets its connection string);
 * under `func start` without it, an OTLP collector when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. Either
 * registers the global providers, which the handlers' telemetry asks.
 */
import { startAzureMonitor } from "../adapters/telemetry/azure-monitor.js";
import { startOtlpTelemetry } from "../adapters/telemetry/otlp-sdk.js";
import { loadOtlpSettings } from "../config/telemetry-settings.js";
import { INSTRUMENTATION_SCOPE } from "../telemetry/telemetry.js";

if (!startAzureMonitor(process.env)) {
  const otlp = loadOtlpSettings(process.env, INSTRUMENTATION_SCOPE);
  if (otlp) startOtlpTelemetry(otlp);
}
