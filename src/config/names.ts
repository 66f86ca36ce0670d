/**
 * Names shared by the code, `local.settings.sample.json` and the Bicep templates: queues, the state
 * container, and the app settings that name connections. A consistency test keeps all three in step.
 */
export const QUEUE_NAMES = {
  orders: "orders",
  /**
   * Messages a handler refused (invalid or conflicting orders, malformed Agent messages), with the
   * reason, the description and the source queue in their application properties.
   */
  invalidMessages: "invalid-messages",
  agentRequests: "agent-requests",
  agentResponses: "agent-responses",
  /** The status queue the sample sender names as `replyTo`; submitters may name their own. */
  orderStatus: "order-status",
  /** The storefront's own status queue: it names it as `replyTo`, and only it reads it. */
  storefrontStatus: "storefront-status",
} as const;

/** Prefixes of the identity-based connections, in the Functions `<name>__<property>` convention. */
export const CONNECTION_NAMES = {
  serviceBus: "ServiceBusConnection",
  cosmos: "CosmosDb",
  sql: "OrdersSql",
  storage: "AzureWebJobsStorage",
} as const;

export const TIMER_SCHEDULE_SETTINGS = {
  starter: "STARTER_SCHEDULE",
  supervisor: "SUPERVISOR_SCHEDULE",
  retention: "RETENTION_SCHEDULE",
} as const;

export const PARTNER_URL_SETTING = "PARTNER_URL";
/**
 * The partner's access key, optional: when set, the Agents and the partner's controls send it as
 * `x-partner-key`. In Azure, a Key Vault reference to the secret the partner app checks against.
 */
export const PARTNER_ACCESS_KEY_SETTING = "PARTNER_ACCESS_KEY";
export const LEASE_CONTAINER_SETTING = "SUPERVISOR_LEASE_CONTAINER";

/** Settings the Functions host itself reads (host.json refers to TASKHUB_NAME). */
export const HOST_SETTING_NAMES = [
  "FUNCTIONS_WORKER_RUNTIME",
  "AzureWebJobsStorage",
  "TASKHUB_NAME",
] as const;
