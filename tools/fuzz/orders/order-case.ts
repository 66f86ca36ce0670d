import fc from "fast-check";
import type { OrderMessage } from "../../../src/domain/order.js";
import { applyChange, type Change, change } from "./changes.js";
import { isJsonObject, type JsonObject, reordered } from "./json-object.js";
import { applyMutation, type Mutation, mutation } from "./mutations.js";
import { type RawBody, rawBody, rawSubmission } from "./raw-bodies.js";
import type { Content, Submission } from "./submission.js";
import { validOrder } from "./valid-orders.js";

/** How a step's message is framed; neither may change what becomes of it. */
export interface Framing {
  readonly traceparent: string | null;
  /** HTTP only. */
  readonly chunked: boolean;
}

/** One input of a case; `order` picks one of the case's orders (modulo their number). */
export type Step = Framing & StepContent;

type StepContent =
  /** The order as it is, its keys in an order `layout` chooses: a first submission or a duplicate. */
  | { readonly kind: "send"; readonly order: number; readonly layout: number; readonly indent: number }
  /** The order under the same id with other data. */
  | { readonly kind: "change"; readonly order: number; readonly change: Change }
  /** The order broken in one field. */
  | { readonly kind: "mutate"; readonly order: number; readonly mutation: Mutation }
  | { readonly kind: "raw"; readonly order: number; readonly body: RawBody };

/** A few valid orders and the inputs made of them, sent one after another. */
export interface OrderCase {
  readonly orders: readonly OrderMessage[];
  readonly steps: readonly Step[];
}

const hex = (length: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: length, maxLength: length });

const framing: fc.Arbitrary<Framing> = fc.record({
  traceparent: fc.option(
    fc.oneof(
      fc.tuple(hex(32), hex(16)).map(([trace, span]) => `00-${trace}-${span}-01`),
      fc.constantFrom("", "00-00000000000000000000000000000000-0000000000000000-01", "00-abc", "ff-x-y-z"),
      fc.string({ unit: "grapheme-ascii", maxLength: 80 }),
    ),
    { nil: null, freq: 2 },
  ),
  chunked: fc.boolean(),
});

export function orderCase(options: { readonly http: boolean }): fc.Arbitrary<OrderCase> {
  const order = fc.nat(5);
  const content: fc.Arbitrary<StepContent> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("send" as const),
        order,
        layout: fc.nat(7),
        indent: fc.constantFrom(0, 0, 2),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("change" as const), order, change }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("mutate" as const), order, mutation }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("raw" as const), order, body: rawBody(options) }) },
  );
  const step = fc
    .tuple(content, framing)
    .map(([stepContent, stepFraming]): Step => ({ ...stepContent, ...stepFraming }));
  return fc.record({
    orders: fc.array(validOrder, { minLength: 1, maxLength: 3 }),
    steps: fc.array(step, { minLength: 1, maxLength: 4 }),
  });
}

/** The submissions a case stands for, in order. */
export function submissionsOf(value: OrderCase): Submission[] {
  return value.steps.map((step) => ({
    ...submissionOf(step, value.orders[step.order % value.orders.length] as OrderMessage),
    traceparent: step.traceparent,
    chunked: step.chunked,
  }));
}

function submissionOf(step: StepContent, order: OrderMessage): Content {
  switch (step.kind) {
    case "send": {
      const body = reordered(order as unknown as JsonObject, step.layout);
      return {
        label: "valid",
        wire: { kind: "json", value: body, indent: step.indent },
        expect: { valid: true, order },
        watch: order.orderId,
      };
    }
    case "change": {
      const changed = applyChange(order, step.change);
      return {
        label: `same orderId, other ${step.change.field}`,
        wire: { kind: "json", value: changed as unknown as JsonObject, indent: 0 },
        expect: { valid: true, order: changed },
        watch: order.orderId,
      };
    }
    case "mutate": {
      const { body, field } = applyMutation(order, step.mutation);
      return {
        label: `mutated (${step.mutation.kind} ${field})`,
        wire: { kind: "json", value: body, indent: 0 },
        expect: { valid: false, field, problem: "field" },
        watch: watchedId(body),
      };
    }
    case "raw":
      return rawSubmission(step.body, order);
  }
}

function watchedId(body: JsonObject): string | null {
  const id = isJsonObject(body) ? body.orderId : undefined;
  return typeof id === "string" && id.length > 0 && id.length <= 1_000 ? id : null;
}
