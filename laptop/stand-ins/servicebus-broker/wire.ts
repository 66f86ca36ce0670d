import rhea, { type Delivery } from "rhea";

/** Message format of a batched send: an envelope whose data sections are each an encoded message. */
export const BATCH_MESSAGE_FORMAT = 0x80013700;

export const ANNOTATIONS = {
  sequenceNumber: "x-opt-sequence-number",
  enqueuedTime: "x-opt-enqueued-time",
  lockedUntil: "x-opt-locked-until",
  scheduledEnqueueTime: "x-opt-scheduled-enqueue-time",
  deadLetterSource: "x-opt-deadletter-source",
} as const;

/** A decoded AMQP message, with the fields the broker reads or writes. */
export interface AmqpMessage {
  message_id?: unknown;
  correlation_id?: unknown;
  reply_to?: string;
  delivery_count?: number;
  application_properties?: Record<string, unknown>;
  message_annotations?: Record<string, unknown>;
  body?: unknown;
}

interface Section {
  readonly content: Buffer | Buffer[];
  readonly multiple?: boolean;
}

/** The messages of one incoming transfer: the message itself, or each message of a batch. */
export function messagesOfTransfer(message: AmqpMessage | Buffer, delivery: Delivery): AmqpMessage[] {
  if (delivery.format === 0 && !Buffer.isBuffer(message)) return [message];
  if (delivery.format !== BATCH_MESSAGE_FORMAT || !Buffer.isBuffer(message)) {
    throw new Error(`unsupported message format ${delivery.format}`);
  }
  const body = (rhea.message.decode(message) as AmqpMessage).body as Section;
  const encoded = body.multiple ? (body.content as Buffer[]) : [body.content as Buffer];
  return encoded.map((bytes) => rhea.message.decode(bytes) as AmqpMessage);
}

/**
 * The message as Service Bus hands it out: the sender's sections plus the broker's annotations. The
 * header's delivery-count counts the earlier deliveries that failed (AMQP's meaning), which is what
 * Service Bus puts there.
 */
export function outgoingMessage(
  stored: StoredMessage,
  lockedUntil: number | undefined,
  deadLetterSource: string | undefined,
): AmqpMessage {
  const annotations: Record<string, unknown> = {
    ...stored.message.message_annotations,
    [ANNOTATIONS.sequenceNumber]: rhea.types.wrap_long(stored.sequenceNumber),
    [ANNOTATIONS.enqueuedTime]: new Date(stored.enqueuedAt),
  };
  if (lockedUntil !== undefined) annotations[ANNOTATIONS.lockedUntil] = new Date(lockedUntil);
  if (deadLetterSource !== undefined) annotations[ANNOTATIONS.deadLetterSource] = deadLetterSource;
  return { ...stored.message, delivery_count: stored.failedDeliveries, message_annotations: annotations };
}

export function encodeMessage(message: AmqpMessage): Buffer {
  return rhea.message.encode(message);
}

/**
 * The SDK reads a lock token from the delivery tag in .NET GUID byte order (first three groups
 * little-endian) and sends it back to `$management` in RFC 4122 order, so tag and token differ by
 * that swap, which is its own inverse.
 */
export function deliveryTagOf(lockToken: string): Buffer {
  return swapGuidByteOrder(rhea.string_to_uuid(lockToken));
}

export function lockTokenOfTag(tag: Buffer | string): string {
  return rhea.uuid_to_string(swapGuidByteOrder(Buffer.isBuffer(tag) ? tag : Buffer.from(tag)));
}

export function lockTokenOfUuid(uuid: unknown): string {
  if (!Buffer.isBuffer(uuid)) throw new TypeError("a lock token must be a uuid");
  return rhea.uuid_to_string(uuid);
}

function swapGuidByteOrder(bytes: Buffer): Buffer {
  const swapped = Buffer.from(bytes);
  swapped.writeUInt32LE(bytes.readUInt32BE(0), 0);
  swapped.writeUInt16LE(bytes.readUInt16BE(4), 4);
  swapped.writeUInt16LE(bytes.readUInt16BE(6), 6);
  return swapped;
}

export function optionalString(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : String(value);
}

/** A message as a queue keeps it, from enqueue to settlement. */
export interface StoredMessage {
  readonly sequenceNumber: number;
  readonly enqueuedAt: number;
  readonly availableAt: number;
  /** As the sender sent it; dead-lettering and properties-to-modify change its application properties. */
  message: AmqpMessage;
  /** Deliveries that ended without settlement: abandoned, or the lock expired. */
  failedDeliveries: number;
  lock: { readonly token: string; lockedUntil: number } | undefined;
}

export type SubQueueKind = "active" | "deadLetter";
