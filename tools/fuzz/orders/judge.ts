import type { LogLine } from "../../../src/adapters/logging/json-logger.js";
import type { Outcome } from "../tally.js";
import { expectThat, shown } from "../violation.js";
import type { Write } from "../write-log.js";
import { businessOf } from "./changes.js";
import type { Expected } from "./expected.js";
import type { Stored } from "./stored.js";
import type { Problem } from "./submission.js";

export interface DeadLetter {
  readonly reason: string;
  readonly description: string;
}

/** What a channel saw of one submission, once it was answered and settled. */
export interface Observed {
  /** The HTTP answer, when the submission went through the API. */
  readonly http: { readonly status: number; readonly body: unknown } | null;
  /** Whether a message reached the orders queue (not refused first, not dropped as a duplicate id). */
  readonly queued: boolean;
  /** Messages dead-lettered (or parked) while this submission was handled. */
  readonly deadLetters: readonly DeadLetter[];
  /** Messages still on the orders queue afterwards: unsettled, or waiting for redelivery. */
  readonly unsettled: number;
  /** Log lines of a handler or consumer that broke. */
  readonly breakages: readonly LogLine[];
}

export interface Evidence {
  readonly expected: Expected;
  readonly observed: Observed;
  readonly before: Stored | null;
  readonly after: Stored | null;
  readonly writes: readonly Write[];
}

/** Checks every property of one submission; throws a Violation naming the first that broke. */
export function judge(evidence: Evidence): Outcome {
  const { expected, observed } = evidence;
  const [broken] = observed.breakages;
  expectThat(broken === undefined, () => `a handler or consumer broke: ${shown(broken)}`);
  expectThat(observed.unsettled === 0, () => `${observed.unsettled} message(s) left unsettled on the queue`);
  if (observed.http) judgeAnswer(expected, observed.http);
  judgeStores(evidence);
  judgeDeadLetters(expected, observed);
  if (expected.kind === "created") return "accepted";
  if (expected.kind === "unchanged") return "dropped";
  if (observed.http && expected.kind === "invalid") return "refused";
  return observed.deadLetters.length > 0 ? "deadLettered" : "dropped";
}

function judgeAnswer(expected: Expected, answer: { status: number; body: unknown }): void {
  const said = `answered ${answer.status} ${shown(answer.body)}`;
  if (expected.kind !== "invalid") {
    expectThat(answer.status === 202, () => `a valid order was not accepted: ${said}`);
    return;
  }
  const { field, problem } = expected;
  if (problem === "size" && answer.status === 413) {
    expectThat(
      /too large/.test(shown(answer.body)),
      () => `a 413 that does not say the body is too large: ${said}`,
    );
    return;
  }
  expectThat(
    answer.status === 400,
    () => `an invalid message (${field}, ${problem}) was not refused with 400: ${said}`,
  );
  const issues = (answer.body as { issues?: { field?: unknown }[] } | null)?.issues ?? [];
  expectThat(
    issues.some((issue) => issue.field === field),
    () => `the refusal does not name the field ${JSON.stringify(field)}: ${said}`,
  );
}

function judgeStores({ expected, before, after, writes }: Evidence): void {
  if (expected.kind !== "created") {
    const [write] = writes;
    expectThat(write === undefined, () => `${KINDS[expected.kind]} wrote ${shown(writes)}`);
    expectThat(
      before?.text === after?.text,
      () => `the stored order changed: before ${shown(before?.text)}, after ${shown(after?.text)}`,
    );
    return;
  }
  const { order } = expected;
  const strays = writes.filter((write) => write.orderId !== order.orderId);
  expectThat(strays.length === 0, () => `accepting ${order.orderId} wrote other orders: ${shown(strays)}`);
  const record = after?.record;
  expectThat(record !== undefined, () => `an accepted order has no state record: ${order.orderId}`);
  expectThat(
    record.processState === "Pending" && record.replyTo === (order.replyTo ?? null),
    () => `the new record does not match the message: ${shown(record)}`,
  );
  const stored = after?.order;
  const same =
    stored && JSON.stringify(businessOf({ ...order, ...stored })) === JSON.stringify(businessOf(order));
  expectThat(same === true, () => `the stored order does not match the message: ${shown(stored)}`);
}

function judgeDeadLetters(expected: Expected, observed: Observed): void {
  const letters = observed.deadLetters;
  const expectsOne =
    observed.queued && (expected.kind === "conflict" || (expected.kind === "invalid" && !observed.http));
  if (!expectsOne) {
    expectThat(letters.length === 0, () => `${KINDS[expected.kind]} was dead-lettered: ${shown(letters)}`);
    return;
  }
  const [letter] = letters;
  expectThat(
    letters.length === 1 && letter !== undefined,
    () => `${KINDS[expected.kind]} was not dead-lettered once: ${shown(letters)}`,
  );
  const text = `${letter.reason}: ${letter.description}`;
  if (expected.kind === "conflict") {
    expectThat(
      expected.fields.some((field) => letter.description.includes(field)),
      () => `the conflict's reason names none of ${expected.fields.join(", ")}: ${shown(text)}`,
    );
    return;
  }
  if (expected.kind !== "invalid") return;
  expectThat(
    letter.description.includes(`${expected.field}: `) &&
      PROBLEM_WORDS[expected.problem].test(letter.description),
    () =>
      `the dead-letter reason does not name ${JSON.stringify(expected.field)} (${expected.problem}): ${shown(text)}`,
  );
}

const KINDS: Record<Expected["kind"], string> = {
  created: "a new order",
  unchanged: "a duplicate of an accepted order",
  conflict: "a conflicting resend",
  invalid: "an invalid message",
};

/** How a reason says what the problem is, besides naming the field. */
const PROBLEM_WORDS: Record<Problem, RegExp> = {
  field: /./,
  size: /bytes/,
  form: /JSON/,
};
