import type { AgentRequest, AgentResponse } from "../../domain/agent-messages.js";
import type { AlertSink } from "../../ports/alerts.js";
import type { Clock } from "../../ports/clock.js";
import type { DurableClient } from "../../ports/durable-client.js";
import type { Logger } from "../../ports/logger.js";
import type { OrdersRepository } from "../../ports/orders-repository.js";
import type { StateStore } from "../../ports/state-store.js";
import type { StatusNotifier } from "../../ports/status-notifier.js";
import type { Telemetry } from "../../telemetry/telemetry.js";

/** Everything the order activities use; each host passes its own adapters. */
export interface OrderActivityDeps {
  readonly states: StateStore;
  readonly orders: OrdersRepository;
  readonly notifier: StatusNotifier;
  readonly alerts: AlertSink;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The Agent in its activity form. */
  readonly agent: (request: AgentRequest) => Promise<AgentResponse>;
  /** The Agent in its queue form: puts the request on the Agent's request queue. */
  readonly sendAgentRequest: (request: AgentRequest) => Promise<void>;
  /**
   * Called with the invocation's durable client when an order leaves `Processing`, so the starter can
   * admit the next order at once instead of at its next timer tick. Must not throw.
   */
  readonly onOrderSettled: (durable: DurableClient) => Promise<void>;
  /** Where the spans of the record's changes go (default: the global providers). */
  readonly telemetry?: Telemetry;
  readonly settings: {
    readonly stepTimeoutMs: number;
    readonly agentCallsPerStep: number;
    readonly agentAmplification: number;
    readonly agentMode: "activity" | "queue";
    /** The longest one run of deferrals may last (MAX_DEFERRAL_MS): the `defer` transition parks the order past it. */
    readonly maxDeferralMs: number;
  };
}
