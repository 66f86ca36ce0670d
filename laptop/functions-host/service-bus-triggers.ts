import type { ServiceBusClient, ServiceBusReceivedMessage, ServiceBusReceiver } from "@azure/service-bus";
import { serialSettlement } from "../../src/adapters/servicebus/serial-settlement.js";
import type { Logger } from "../../src/ports/logger.js";
import { type BindingData, invocationContextFor } from "../worker/invocation-context.js";
import { type CapturedFunction, triggerOf } from "../worker/registration-capture.js";

export interface ServiceBusTriggerOptions {
  /** The functions with a `serviceBusTrigger`. */
  readonly functions: readonly CapturedFunction[];
  /** A client for the connection a trigger names (its `connection`, an app setting prefix). */
  readonly clientFor: (connection: string) => ServiceBusClient;
  /** Resolves `%SETTING%` in a queue name. */
  readonly resolve: (text: string) => string;
  /** host.json `extensions.serviceBus`: messages handled at once per function, lock renewal. */
  readonly maxConcurrentCalls: number;
  readonly maxAutoLockRenewalDurationInMs: number;
  readonly bindingData: BindingData;
  readonly logger: Logger;
}

export interface ServiceBusTriggers {
  close(): Promise<void>;
}

/**
 * Feeds each queue trigger as the Service Bus extension does with `autoCompleteMessages`: peek-lock,
 * the handler called with the body and the trigger metadata, the message completed when the handler
 * returns and abandoned when it throws; the broker dead-letters it past the queue's maximum delivery
 * count. Locks are renewed while the handler runs.
 * Settlements go out one at a time (serial-settlement.ts says why), so the SDK's own auto-complete,
 * which settles concurrently, is not used.
 */
export function startServiceBusTriggers(options: ServiceBusTriggerOptions): ServiceBusTriggers {
  const receivers: ServiceBusReceiver[] = [];
  for (const fn of options.functions) {
    const trigger = triggerOf(fn);
    const queueName = options.resolve(String(trigger?.queueName ?? ""));
    const receiver = options.clientFor(String(trigger?.connection ?? "")).createReceiver(queueName, {
      receiveMode: "peekLock",
      maxAutoLockRenewalDurationInMs: options.maxAutoLockRenewalDurationInMs,
    });
    const settle = serialSettlement();
    receiver.subscribe(
      {
        processMessage: async (message) => {
          // As the host logs every execution it starts.
          options.logger.info("host.servicebus.message", {
            functionName: fn.name,
            queue: queueName,
            messageId: String(message.messageId ?? ""),
            deliveryCount: (message.deliveryCount ?? 0) + 1,
          });
          const context = invocationContextFor(fn, {
            triggerMetadata: triggerMetadataOf(message),
            bindingData: options.bindingData,
            logger: options.logger,
          });
          try {
            await fn.handler(message.body, context);
          } catch (error) {
            options.logger.warn("host.function.failed", {
              functionName: fn.name,
              queue: queueName,
              messageId: String(message.messageId ?? ""),
              deliveryCount: (message.deliveryCount ?? 0) + 1,
              error,
            });
            // A failed settlement reaches processError through the SDK; the lock then expires.
            await settle(() => receiver.abandonMessage(message));
            return;
          }
          await settle(() => receiver.completeMessage(message));
        },
        processError: async ({ error, errorSource }) => {
          options.logger.warn("host.servicebus.error", {
            functionName: fn.name,
            queue: queueName,
            errorSource,
            error,
          });
        },
      },
      { autoCompleteMessages: false, maxConcurrentCalls: options.maxConcurrentCalls },
    );
    receivers.push(receiver);
  }
  return {
    close: async () => {
      await Promise.all(receivers.map((receiver) => receiver.close()));
    },
  };
}

/**
 * The trigger metadata the Functions Node.js worker gives a v4 handler for a Service Bus message: the
 * message's system properties in camelCase, times as ISO text, and its application properties (also
 * under their older name, `userProperties`).
 */
export function triggerMetadataOf(message: ServiceBusReceivedMessage): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    messageId: message.messageId === undefined ? undefined : String(message.messageId),
    // The extension's .NET client counts this delivery too; AMQP's header, which the SDK hands on, does not.
    deliveryCount: (message.deliveryCount ?? 0) + 1,
    sequenceNumber: message.sequenceNumber?.toNumber(),
    enqueuedTimeUtc: message.enqueuedTimeUtc?.toISOString(),
    expiresAtUtc: message.expiresAtUtc?.toISOString(),
    lockToken: message.lockToken,
    contentType: message.contentType,
    correlationId: message.correlationId === undefined ? undefined : String(message.correlationId),
    subject: message.subject,
    label: message.subject,
    replyTo: message.replyTo,
    to: message.to,
    sessionId: message.sessionId,
    deadLetterSource: message.deadLetterSource,
    applicationProperties: message.applicationProperties ?? {},
    userProperties: message.applicationProperties ?? {},
  };
  return Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== undefined));
}
