import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { createHttpPartnerControls } from "../../adapters/partner/http-partner-controls.js";
import { bodyTooLarge, MAX_OPERATOR_BODY_BYTES } from "../../operator/orders-api.js";
import { createPartnerApi } from "../../operator/partner-api.js";
import type { PartnerControls } from "../../ports/partner-controls.js";
import type { AzureServices } from "../azure-services.js";
import { bodyOf, toResponse } from "./orders-http.js";

/** The partner's controls' routes over the shared partner API (src/operator/partner-api.ts). */
export function createPartnerHttpHandlers(services: AzureServices) {
  const api = createPartnerApi({ controls: controlsOf(services), logger: services.logger });
  const withBody = async (request: HttpRequest, handle: (text: string) => ReturnType<typeof api.status>) => {
    const text = await bodyOf(request, MAX_OPERATOR_BODY_BYTES);
    return toResponse(text === undefined ? bodyTooLarge(MAX_OPERATOR_BODY_BYTES) : await handle(text));
  };
  return {
    status: async (): Promise<HttpResponseInit> => toResponse(await api.status()),
    setFaults: (request: HttpRequest): Promise<HttpResponseInit> => withBody(request, api.setFaults),
    startOutage: (request: HttpRequest): Promise<HttpResponseInit> => withBody(request, api.startOutage),
    endOutage: async (): Promise<HttpResponseInit> => toResponse(await api.endOutage()),
  };
}

function controlsOf(services: AzureServices): PartnerControls {
  if (services.partnerControls) return services.partnerControls;
  const { partnerUrl, pipeline } = services.settings;
  return createHttpPartnerControls({
    url: partnerUrl,
    clock: services.clock,
    ...(pipeline.partnerAccessKey !== undefined ? { accessKey: pipeline.partnerAccessKey } : {}),
  });
}
