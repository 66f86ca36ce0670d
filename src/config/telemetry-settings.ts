import { type Environment, SettingsError } from "./settings.js";

/** OTLP over HTTP: the setting that turns it on (OpenTelemetry's standard name). */
export const OTLP_ENDPOINT_SETTING = "OTEL_EXPORTER_OTLP_ENDPOINT";

export interface OtlpSettings {
  /** The collector's base URL; spans go to `<endpoint>/v1/traces`, metrics to `<endpoint>/v1/metrics`. */
  readonly endpoint: string;
  readonly serviceName: string;
}

/**
 * Where an OTLP collector is, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; undefined when it is not.
 * A value that is not an http(s) URL is refused with a SettingsError naming the setting.
 */
export function loadOtlpSettings(env: Environment, defaultServiceName: string): OtlpSettings | undefined {
  const endpoint = env[OTLP_ENDPOINT_SETTING]?.trim();
  if (!endpoint) return undefined;
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new SettingsError([
      `${OTLP_ENDPOINT_SETTING} must be an http(s) URL, such as http://localhost:4318; got ${JSON.stringify(endpoint)}`,
    ]);
  }
  return { endpoint, serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName };
}
