import type { LogLine } from "../../../src/adapters/logging/json-logger.js";
import type { DeadLetter } from "../orders/judge.js";
import type { Outcome } from "../tally.js";
import { expectThat, shown } from "../violation.js";
import type { Write } from "../write-log.js";
import type { ReplyExpectation } from "./reply-bodies.js";

/** What one reply did, once the reply queue and the orchestrations it may have woken were idle. */
export interface ReplyObserved {
  readonly deadLetters: readonly DeadLetter[];
  readonly writes: readonly Write[];
  readonly lines: readonly LogLine[];
  readonly breakages: readonly LogLine[];
  readonly unsettled: number;
  /** For a genuine success answering a step the instance was waiting on: that step's status afterwards. */
  readonly answeredStep: { readonly expected: string; readonly status: string | undefined } | null;
}

/** Checks every property of one reply; throws a Violation naming the first that broke. */
export function judgeReply(expect: ReplyExpectation, observed: ReplyObserved): Outcome {
  const [broken] = observed.breakages;
  expectThat(broken === undefined, () => `a handler, consumer or orchestration broke: ${shown(broken)}`);
  expectThat(observed.unsettled === 0, () => `${observed.unsettled} reply message(s) left unsettled`);
  const { deadLetters, writes } = observed;
  if (expect.kind === "genuine") {
    expectThat(deadLetters.length === 0, () => `a genuine reply was dead-lettered: ${shown(deadLetters)}`);
    const strays = writes.filter((write) => write.orderId !== expect.request.orderId);
    expectThat(
      strays.length === 0,
      () => `a reply for ${expect.request.orderId} wrote other orders: ${shown(strays)}`,
    );
    const step = observed.answeredStep;
    expectThat(
      step === null || step.status === step.expected,
      () =>
        `a genuine success for ${expect.request.requestId} left the step ${shown(step?.status)}, not ${step?.expected}`,
    );
    return "accepted";
  }
  expectThat(writes.length === 0, () => `a ${describe(expect)} changed records: ${shown(writes)}`);
  if (expect.kind === "invalid") {
    const [letter] = deadLetters;
    expectThat(
      deadLetters.length === 1 && letter !== undefined,
      () => `an invalid reply was not dead-lettered once: ${shown(deadLetters)}`,
    );
    const named =
      expect.field === null
        ? letter.description.length > 0
        : letter.description.includes(`${expect.field}: `);
    expectThat(named, () => `the dead-letter reason does not name ${shown(expect.field)}: ${shown(letter)}`);
    return "deadLettered";
  }
  if (deadLetters.length > 0) {
    expectThat(
      deadLetters.every((letter) => letter.reason !== "" && letter.description !== ""),
      () => `dead-lettered without a reason: ${shown(deadLetters)}`,
    );
    return "deadLettered";
  }
  const said = observed.lines.find(
    (line) =>
      line.event === "agent.reply.dropped" ||
      (!expect.mustNotReach && line.event === "agent.reply.delivered"),
  );
  expectThat(
    said !== undefined,
    () => `a ${describe(expect)} was neither dead-lettered nor dropped with a logged reason`,
  );
  return "dropped";
}

function describe(expect: ReplyExpectation): string {
  return expect.kind === "invalid" ? "invalid reply" : "reply that answers no waiting step";
}
