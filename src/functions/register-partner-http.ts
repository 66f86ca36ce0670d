import azureFunctions from "@azure/functions";
import { PARTNER_FAULTS_ROUTE, PARTNER_OUTAGE_ROUTE, PARTNER_ROUTE } from "../operator/partner-api.js";
import type { AzureApp } from "./azure-app.js";
import { FUNCTION_NAMES } from "./function-names.js";

type Handlers = AzureApp["partnerHttp"];

/** The partner's controls: the state behind a function key, each change behind the admin key. */
export function registerPartnerHttp(handlers: Handlers): void {
  azureFunctions.app.http(FUNCTION_NAMES.getPartner, {
    methods: ["GET"],
    route: PARTNER_ROUTE,
    authLevel: "function",
    handler: () => handlers.status(),
  });
  azureFunctions.app.http(FUNCTION_NAMES.setPartnerFaults, {
    methods: ["POST"],
    route: PARTNER_FAULTS_ROUTE,
    authLevel: "admin",
    handler: (request) => handlers.setFaults(request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.startPartnerOutage, {
    methods: ["POST"],
    route: PARTNER_OUTAGE_ROUTE,
    authLevel: "admin",
    handler: (request) => handlers.startOutage(request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.endPartnerOutage, {
    methods: ["DELETE"],
    route: PARTNER_OUTAGE_ROUTE,
    authLevel: "admin",
    handler: () => handlers.endOutage(),
  });
}
