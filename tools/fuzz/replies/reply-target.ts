import type { AgentRequest } from "../../../src/domain/agent-messages.js";
import type { OrderMessage } from "../../../src/domain/order.js";
import { breakages } from "../captured-log.js";
import { DeadLetterCursor } from "../dead-letters.js";
import { within } from "../deadline.js";
import type { Tally } from "../tally.js";
import type { FuzzTarget } from "../target.js";
import { expectThat } from "../violation.js";
import { type Reply, replyOf } from "./reply-bodies.js";
import { type ReplyCase, replyCase } from "./reply-case.js";
import { judgeReply, type ReplyObserved } from "./reply-judge.js";
import { type ReplyHandlerFactory, ReplyPipeline } from "./reply-pipeline.js";

/** Malformed, stray and genuine Agent replies on the embedded host's reply queue, to orchestrations waiting for them. */
export function replyTarget(options: { readonly replies?: ReplyHandlerFactory } = {}): FuzzTarget<ReplyCase> {
  return {
    name: "Agent replies",
    arbitrary: replyCase,
    open: async () => {
      const pipeline = await ReplyPipeline.open(options.replies);
      const runner = new ReplyRunner(pipeline);
      return { run: (value, tally) => runner.run(value, tally), close: () => pipeline.close() };
    },
  };
}

/** Starts each case's orders, then sends its replies one at a time and judges each. */
class ReplyRunner {
  private runs = 0;
  private messages = 0;
  private readonly deadLetters: DeadLetterCursor;

  constructor(private readonly pipeline: ReplyPipeline) {
    this.deadLetters = new DeadLetterCursor(pipeline.responses.deadLetterQueue);
  }

  async run(value: ReplyCase, tally: Tally): Promise<void> {
    const run = ++this.runs;
    const orders = Array.from({ length: value.orders }, (_, i) => order(`r${run}-${i + 1}`));
    const waiting = new Map<string, AgentRequest>();
    const note = (requests: readonly AgentRequest[]) => {
      for (const request of requests) waiting.set(request.instanceId, request);
    };
    const first = await within("starting the orders", this.pipeline.startOrders(orders));
    expectThat(
      first.length === orders.length,
      () => `${orders.length} orders started; ${first.length} sent a request`,
    );
    note(first);
    await this.deadLetters.newMessages();
    this.pipeline.log.take();
    const sent: Reply[] = [];
    const answered = new Set<string>();
    const tampered = new Set<string>();
    for (const [index, spec] of value.replies.entries()) {
      const reply = replyOf(spec, [...waiting.values()], sent);
      if (spec.kind === "otherStep")
        tampered.add([...waiting.values()][spec.target % waiting.size]?.instanceId ?? "");
      const label = `reply ${index + 1} (${spec.kind})`;
      try {
        const observed = await within(label, this.send(reply, answered, tampered, note));
        tally.record(judgeReply(reply.expect, observed));
      } catch (error) {
        if (error instanceof Error) error.message = `${label}: ${error.message}`;
        throw error;
      }
      sent.push(reply);
    }
  }

  private async send(
    reply: Reply,
    answered: Set<string>,
    tampered: ReadonlySet<string>,
    note: (requests: readonly AgentRequest[]) => void,
  ): Promise<ReplyObserved> {
    const { pipeline } = this;
    const expect = reply.expect;
    const checkStep =
      expect.kind === "genuine" &&
      expect.outcome === "succeeded" &&
      !answered.has(expect.request.requestId) &&
      !tampered.has(expect.request.instanceId) &&
      (await pipeline.pipeline.runtime.getStatus(expect.request.instanceId))?.runtimeStatus === "Running";
    const mark = pipeline.writes.mark();
    note(await pipeline.reply(`reply-${++this.messages}`, reply.body));
    if (expect.kind === "genuine") answered.add(expect.request.requestId);
    const lines = pipeline.log.take();
    return {
      deadLetters: await this.deadLetters.newMessages(),
      writes: pipeline.writes.since(mark),
      lines,
      breakages: breakages(lines),
      unsettled: (await pipeline.responses.peek(10)).length,
      answeredStep: checkStep && expect.kind === "genuine" ? await this.stepAfter(expect.request) : null,
    };
  }

  private async stepAfter(request: AgentRequest) {
    const record = await this.pipeline.pipeline.states.get(request.orderId);
    const status = record?.steps.find((step) => step.name === request.step)?.status;
    return { expected: request.operation === "do" ? "Completed" : "Compensated", status };
  }
}

function order(orderId: string): OrderMessage {
  return {
    schemaVersion: 1,
    orderId,
    customerId: "fuzz",
    currency: "EUR",
    items: [{ sku: "SKU-1", quantity: 1, unitPriceMinor: 100 }],
  };
}
