import type { ServiceBusClient, ServiceBusMessage, ServiceBusSender } from "@azure/service-bus";
import type { Clock } from "../../ports/clock.js";
import {
  checkOutgoingMessage,
  DEFAULT_QUEUE_OPTIONS,
  type DeadLetterDetails,
  type MessageQueue,
  type OutgoingMessage,
  type QueueOptions,
  type ReceivedMessage,
  type SendResult,
} from "../../ports/message-queue.js";
import { toServiceBusMessage } from "./message-mapping.js";
import { SentIdLedger } from "./sent-id-ledger.js";
import { checkPositiveInteger, ServiceBusQueueReceiver } from "./service-bus-receiver.js";

export interface ServiceBusQueueSettings {
  /** How long a receive waits for the first message before it returns none; 1 s by default. */
  readonly receiveWaitMs?: number;
  /** What this sender judges the duplicate-detection window by. */
  readonly clock: Clock;
}

export const DEFAULT_RECEIVE_WAIT_MS = 1_000;

/** The longest message id Service Bus accepts. */

/**
 * The MessageQueue port on a Service Bus queue. The queue's lock duration, maximum delivery count and
 * duplicate-detection window are properties of the entity in Azure; the options given here must match
 * them, and the adapter only reports them (and counts duplicates by the window).
 *
 * Duplicates: Service Bus drops a message whose id it accepted inside the window without telling the
 * sender, so `SendResult.duplicates` counts only what this adapter can tell: ids it sent itself inside
 * the window, and ids repeated within one send. Every message still goes to the broker, which decides.
 */
export class ServiceBusMessageQueue implements MessageQueue {
  readonly options: QueueOptions;
  readonly deadLetterQueue: ServiceBusQueueReceiver;
  private readonly sender: ServiceBusSender;
  private readonly receiver: ServiceBusQueueReceiver;
  private readonly sentIds: SentIdLedger;
  private readonly clock: Clock;

  constructor(
    client: ServiceBusClient,
    readonly name: string,
    options: Partial<QueueOptions> = {},
    settings: ServiceBusQueueSettings,
  ) {
    this.options = { ...DEFAULT_QUEUE_OPTIONS, ...options };
    for (const [option, value] of Object.entries(this.options)) checkPositiveInteger(option, value);
    const receiveWaitMs = settings.receiveWaitMs ?? DEFAULT_RECEIVE_WAIT_MS;
    checkPositiveInteger("receiveWaitMs", receiveWaitMs);
    this.clock = settings.clock;
    const receiverSettings = {
      receiveWaitMs,
      lockDurationMs: this.options.lockDurationMs,
      clock: this.clock,
    };

    // Left to itself the SDK renews the lock of every received message for five minutes. The port's
    // lock lasts one lock duration unless renewLock extends it, so that the message of a handler that
    // died comes back when the queue's options say it does.
    const receiverOptions = { receiveMode: "peekLock", maxAutoLockRenewalDurationInMs: 0 } as const;
    this.sender = client.createSender(name);
    this.receiver = new ServiceBusQueueReceiver(client.createReceiver(name, receiverOptions), name, {
      ...receiverSettings,
      canDeadLetter: true,
    });
    this.deadLetterQueue = new ServiceBusQueueReceiver(
      client.createReceiver(name, { ...receiverOptions, subQueueType: "deadLetter" }),
      `${name}/$deadletterqueue`,
      { ...receiverSettings, canDeadLetter: false },
    );
    this.sentIds = new SentIdLedger(this.options.duplicateDetectionWindowMs, this.clock);
  }

  /**
   * Sends in as few batches as the broker's message size allows. A send that needs several batches is
   * not atomic: if one fails, those before it stay sent, and sending again with the same ids is safe.
   */
  async send(messages: OutgoingMessage | readonly OutgoingMessage[]): Promise<SendResult> {
    const batch = isBatch(messages) ? messages : [messages];
    for (const message of batch) checkOutgoingMessage(message);
    if (batch.length === 0) return { accepted: 0, duplicates: 0 };
    const ids = batch.map((m) => m.messageId);
    const sentAt = this.clock.now().getTime();
    const duplicates = this.sentIds.countDuplicates(ids);
    await this.sendAll(batch.map(toServiceBusMessage));
    this.sentIds.record(ids, sentAt);
    return { accepted: batch.length - duplicates, duplicates };
  }

  receive(maxMessages: number): Promise<ReceivedMessage[]> {
    return this.receiver.receive(maxMessages);
  }

  complete(message: ReceivedMessage): Promise<void> {
    return this.receiver.complete(message);
  }

  abandon(message: ReceivedMessage): Promise<void> {
    return this.receiver.abandon(message);
  }

  deadLetter(message: ReceivedMessage, details: DeadLetterDetails): Promise<void> {
    return this.receiver.deadLetter(message, details);
  }

  renewLock(message: ReceivedMessage): Promise<Date> {
    return this.receiver.renewLock(message);
  }

  peek(maxMessages: number, fromSequenceNumber?: number): Promise<ReceivedMessage[]> {
    return this.receiver.peek(maxMessages, fromSequenceNumber);
  }

  /** Closes this queue's sender and receivers; the client stays open for its owner to close. */
  async close(): Promise<void> {
    await Promise.all([this.sender.close(), this.receiver.close(), this.deadLetterQueue.close()]);
  }

  private async sendAll(messages: readonly ServiceBusMessage[]): Promise<void> {
    const [only] = messages;
    if (messages.length === 1 && only) return this.sender.sendMessages(only);
    let batch = await this.sender.createMessageBatch();
    for (const message of messages) {
      if (batch.tryAddMessage(message)) continue;
      if (batch.count === 0)
        throw new RangeError(`message ${message.messageId} is larger than a batch may be`);
      await this.sender.sendMessages(batch);
      batch = await this.sender.createMessageBatch();
      if (!batch.tryAddMessage(message)) {
        throw new RangeError(`message ${message.messageId} is larger than a batch may be`);
      }
    }
    if (batch.count > 0) await this.sender.sendMessages(batch);
  }
}

function isBatch(
  messages: OutgoingMessage | readonly OutgoingMessage[],
): messages is readonly OutgoingMessage[] {
  return Array.isArray(messages);
}
