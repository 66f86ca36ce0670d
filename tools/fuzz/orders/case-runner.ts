import { within } from "../deadline.js";
import type { Tally } from "../tally.js";
import { expectThat } from "../violation.js";
import { expectedOf } from "./expected.js";
import { judge, type Observed } from "./judge.js";
import { type OrderCase, submissionsOf } from "./order-case.js";
import { type OrderStores, readStored, recordCount } from "./stored.js";
import type { Submission } from "./submission.js";

/** An entry point for order messages: sends one, and reports once it is answered and settled. */
export interface OrderChannel {
  send(submission: Submission): Promise<Observed>;
}

/**
 * Sends a case's submissions one after another through a channel and judges each against what the
 * stores held before it; after the case, the store must hold exactly the orders accepted so far.
 */
export class OrderCaseRunner {
  private readonly accepted = new Set<string>();

  constructor(
    private readonly stores: OrderStores,
    private readonly channel: OrderChannel,
  ) {}

  async run(value: OrderCase, tally: Tally): Promise<void> {
    for (const submission of submissionsOf(value)) {
      try {
        tally.record(await this.submit(submission));
      } catch (error) {
        if (error instanceof Error) error.message = `${submission.label}: ${error.message}`;
        throw error;
      }
    }
    const count = await recordCount(this.stores.states);
    expectThat(
      count === this.accepted.size,
      () => `the state store holds ${count} records; ${this.accepted.size} orders were accepted`,
    );
  }

  private async submit(submission: Submission) {
    const { stores } = this;
    const read = () =>
      submission.watch === null ? Promise.resolve(null) : readStored(stores, submission.watch);
    const before = await read();
    const expected = expectedOf(submission.expect, before);
    const mark = stores.writes.mark();
    const observed = await within(`sending ${submission.label}`, this.channel.send(submission));
    const after = await read();
    const outcome = judge({ expected, observed, before, after, writes: stores.writes.since(mark) });
    if (expected.kind === "created") this.accepted.add(expected.order.orderId);
    return outcome;
  }
}
