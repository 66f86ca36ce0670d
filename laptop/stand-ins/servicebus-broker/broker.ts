import { once } from "node:events";
import type { AddressInfo, Server, Socket } from "node:net";
import rhea, { type Connection, type Delivery, type EventContext, type Receiver, type Sender } from "rhea";
import { SystemClock } from "../../../src/adapters/clock/system-clock.js";
import type { Clock } from "../../../src/ports/clock.js";
import { DEFAULT_QUEUE_OPTIONS, type QueueOptions } from "../../../src/ports/message-queue.js";
import { parseAddress } from "./addresses.js";
import { Consumer, type Disposition } from "./consumer.js";
import { QueueEntity, type QueueObserver, type SubQueueKind } from "./entity.js";
import { CONDITIONS } from "./errors.js";
import { answerCbs, answerManagement, type Reply } from "./management.js";
import { openQueueFile, type QueueFile } from "./queue-file.js";
import { acknowledgePromptly, declareMaxMessageSize } from "./rhea-internals.js";
import { type AmqpMessage, encodeMessage, messagesOfTransfer } from "./wire.js";

export interface ServiceBusStandInOptions {
  /** What the broker judges locks, schedules and duplicate windows by; the system clock by default. */
  readonly clock?: Clock;
  /** Default 127.0.0.1 and any free port; `sas host` listens where the app's connection string points. */
  readonly host?: string;
  readonly port?: number;
  /** A SQLite file that keeps the queues across restarts; default in memory only. */
  readonly file?: string;
  /** Told of every operation a queue does for a client (the bench counts them); default none. */
  readonly observe?: QueueObserver;
}

/** Standard tier's limit. */
const MAX_MESSAGE_SIZE = 256 * 1024;

const DISPOSITIONS: readonly Disposition[] = ["accepted", "released", "modified", "rejected"];

interface AmqpError {
  readonly condition: string;
  readonly description: string;
}

/** The node a link attaches to, with the queue it belongs to. */
type Node =
  | { readonly node: "cbs" }
  | { readonly node: "management" | "entity"; readonly queue: QueueEntity; readonly kind: SubQueueKind }
  | { readonly node: "refused"; readonly error: AmqpError };

/**
 * An in-process AMQP 1.0 broker that answers what `@azure/service-bus` asks of Service Bus: CBS
 * tokens, sends (batched too), peek-lock receives with credit and drain, settlement, and the
 * `$management` operations for lock renewal, peek and disposition. Queues exist once created.
 */
export class ServiceBusStandIn {
  private readonly queues = new Map<string, QueueEntity>();
  private readonly consumers = new Map<Sender, Consumer>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly clock: Clock,
    private readonly file: QueueFile | undefined,
    private readonly observe: QueueObserver | undefined,
  ) {
    server.on("connection", (socket: Socket) => {
      socket.setNoDelay(true);
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
  }

  static async start(options: ServiceBusStandInOptions = {}): Promise<ServiceBusStandIn> {
    const container = rhea.create_container({
      id: "servicebus-stand-in",
      // Settlement is the broker's decision, so rhea accepts and settles nothing on its own.
      autoaccept: false,
      autosettle: false,
      treat_modified_as_released: false,
    });
    const server = container.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 0 });
    // Rejects with the listen error (EADDRINUSE, ...) when the server emits one.
    await once(server, "listening");
    const file = options.file ? openQueueFile(options.file) : undefined;
    const broker = new ServiceBusStandIn(server, options.clock ?? new SystemClock(), file, options.observe);
    broker.listenTo(container);
    return broker;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Plain TCP, as the SDK connects to the Service Bus emulator. */
  get connectionString(): string {
    return `Endpoint=sb://127.0.0.1:${this.port};SharedAccessKeyName=test;SharedAccessKey=test;UseDevelopmentEmulator=true`;
  }

  createQueue(name: string, options: Partial<QueueOptions> = {}): QueueEntity {
    const key = name.toLowerCase();
    if (this.queues.has(key)) throw new Error(`queue ${name} already exists`);
    const queue = new QueueEntity(
      name,
      { ...DEFAULT_QUEUE_OPTIONS, ...options },
      this.clock,
      this.file?.journal,
      this.observe,
    );
    if (this.file) queue.restore(this.file.restore(name));
    queue.onAvailable(() => {
      for (const consumer of this.consumers.values()) {
        if (consumer.entity === queue) consumer.schedulePump();
      }
    });
    this.queues.set(key, queue);
    return queue;
  }

  /** Stops listening and drops every connection; clients still open see them fail. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.consumers.clear();
    await closed;
    this.file?.close();
  }

  private listenTo(container: ReturnType<typeof rhea.create_container>): void {
    container.on("connection_open", (context: EventContext) => acknowledgePromptly(context.connection));
    container.on("sender_open", (context: EventContext) => this.onReceiverAttached(context.sender as Sender));
    container.on("receiver_open", (context: EventContext) => {
      this.onSenderAttached(context.receiver as Receiver);
    });
    container.on("message", (context: EventContext) => this.onMessage(context));
    container.on("sendable", (context: EventContext) => this.consumerOf(context)?.schedulePump());
    container.on("sender_draining", (context: EventContext) => this.consumerOf(context)?.drain());
    for (const disposition of DISPOSITIONS) {
      container.on(disposition, (context: EventContext) => {
        if (context.delivery) this.consumerOf(context)?.settle(context.delivery, disposition);
      });
    }
    // Responses have no consumer to settle them: they are done once the client settles.
    container.on("settled", (context: EventContext) => {
      if (context.sender && context.delivery && !context.delivery.settled) context.delivery.update(true);
    });
    container.on("sender_close", (context: EventContext) => this.consumers.delete(context.sender as Sender));
    container.on("disconnected", (context: EventContext) => this.forgetConnection(context.connection));
    container.on("connection_close", (context: EventContext) => this.forgetConnection(context.connection));
    // A client's failing link or connection is that client's business, not the broker's.
    container.on("error", () => {});
  }

  /** A client's receiver attached; the broker's end is a sender. */
  private onReceiverAttached(sender: Sender): void {
    const address = sender.source?.address;
    sender.set_source({ address });
    const node = this.nodeAt(address);
    if (node.node === "refused") {
      sender.close(node.error);
    } else if (node.node === "entity") {
      this.consumers.set(sender, new Consumer(sender, node.queue, node.kind));
    }
  }

  /** A client's sender attached; the broker's end is a receiver. */
  private onSenderAttached(receiver: Receiver): void {
    const address = receiver.target?.address;
    receiver.set_target({ address });
    const node = this.nodeAt(address);
    if (node.node === "refused") {
      receiver.close(node.error);
    } else if (node.node === "entity" && node.kind === "deadLetter") {
      receiver.close({ condition: CONDITIONS.notAllowed, description: "cannot send to a dead-letter queue" });
    } else {
      declareMaxMessageSize(receiver, MAX_MESSAGE_SIZE);
    }
  }

  private onMessage(context: EventContext): void {
    const { receiver, delivery, message } = context;
    if (!receiver || !delivery || !message) return;
    const node = this.nodeAt(receiver.target?.address);
    const request = message as AmqpMessage;
    switch (node.node) {
      case "refused":
        delivery.reject(node.error);
        break;
      case "cbs":
        delivery.accept();
        this.respond(context.connection, request, answerCbs(request));
        break;
      case "management":
        delivery.accept();
        this.respond(context.connection, request, answerManagement(node.queue, node.kind, request));
        break;
      case "entity":
        this.enqueue(node.queue, message, delivery);
        break;
    }
  }

  private enqueue(queue: QueueEntity, message: AmqpMessage | Buffer, delivery: Delivery): void {
    try {
      queue.enqueue(messagesOfTransfer(message, delivery));
      delivery.accept();
    } catch (error) {
      delivery.reject({ condition: CONDITIONS.internalError, description: String(error) });
    }
  }

  /** Sends the response to the link the request names in reply-to, on the same connection. */
  private respond(connection: Connection, request: AmqpMessage, reply: Reply): void {
    const replyTo = request.reply_to;
    const link = connection.find_sender(
      (s: Sender) =>
        s.name === replyTo || (s.target as { address?: string } | undefined)?.address === replyTo,
    );
    const response: AmqpMessage = {
      correlation_id: request.message_id,
      application_properties: reply.applicationProperties,
      body: reply.body,
    };
    link?.send(encodeMessage(response), undefined, 0);
  }

  private nodeAt(address: string | undefined): Node {
    const parsed = parseAddress(address);
    if (parsed === undefined) return refused(`no node at ${String(address)}`);
    if (parsed.node === "cbs") return parsed;
    const queue = this.queues.get(parsed.entity.queueKey);
    // Worded as Service Bus words it: the SDK reads "entity not found" from the description.
    if (!queue) return refused(`The messaging entity '${address}' could not be found.`);
    return { node: parsed.node, queue, kind: parsed.entity.kind };
  }

  private consumerOf(context: EventContext): Consumer | undefined {
    return context.sender ? this.consumers.get(context.sender) : undefined;
  }

  private forgetConnection(connection: Connection): void {
    for (const sender of this.consumers.keys()) {
      if (sender.connection === connection) this.consumers.delete(sender);
    }
  }
}

function refused(description: string): Node {
  return { node: "refused", error: { condition: CONDITIONS.notFound, description } };
}
