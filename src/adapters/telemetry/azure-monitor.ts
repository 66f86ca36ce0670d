import { shutdownAzureMonitor, useAzureMonitor } from "@azure/monitor-opentelemetry";
import { azureCredential } from "../azure-credential.js";

/** The setting the Bicep sets to the Application Insights resource's connection string. */
export const APPINSIGHTS_SETTING = "APPLICATIONINSIGHTS_CONNECTION_STRING";

/**
 * The Azure Monitor OpenTelemetry distro, registered as the global tracer and meter providers, so the
 * handlers' spans and metrics (asked of the global API) go to Application Insights. Local
 * authentication is off on the provisioned resource, so ingestion uses the app's managed identity (the one
 * AZURE_CLIENT_ID names, ../azure-credential.ts).
 * Returns false, registering nothing, when the connection string is not set (a laptop, the tests).
 */
export function startAzureMonitor(env: Readonly<Record<string, string | undefined>>): boolean {
  const connectionString = env[APPINSIGHTS_SETTING];
  if (!connectionString) return false;
  useAzureMonitor({
    azureMonitorExporterOptions: { connectionString, credential: azureCredential(env) },
  });
  return true;
}

/** Flushes and stops the distro (tests; the host's worker exits without it). */
export function stopAzureMonitor(): Promise<void> {
  return shutdownAzureMonitor();
}
