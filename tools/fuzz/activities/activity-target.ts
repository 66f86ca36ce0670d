import fc from "fast-check";
import { within } from "../deadline.js";
import type { JsonObject } from "../orders/json-object.js";
import { identifier } from "../orders/valid-orders.js";
import type { Outcome } from "../tally.js";
import type { FuzzTarget } from "../target.js";
import { expectThat, shown } from "../violation.js";
import { ActivityHarness, type HandlerSource, type SideEffects } from "./activity-harness.js";
import { applyInputMutation, type InputMutation, inputMutation } from "./input-mutations.js";
import { ACTIVITY_NAMES, ACTIVITY_SHAPES, type ActivityName, RECORD_ACTIVITIES } from "./shapes.js";
import { type AttemptRef, forAttempt, validInput } from "./valid-inputs.js";

/** One input handed to an activity about the run's order: broken in one field, or well-formed for someone else. */
export type InputSpec =
  | {
      readonly kind: "broken";
      readonly activity: ActivityName;
      readonly input: JsonObject;
      readonly mutation: InputMutation;
    }
  | {
      readonly kind: "foreign";
      readonly activity: ActivityName;
      readonly input: JsonObject;
      /** Another attempt's instance on the run's order, or an order nobody submitted. */
      readonly whose: "otherInstance" | "unknownOrder";
      readonly id: string;
    };

export interface ActivityCase {
  readonly inputs: readonly InputSpec[];
}

const activity = fc.constantFrom(...ACTIVITY_NAMES);
const spec: fc.Arbitrary<InputSpec> = fc.oneof(
  {
    weight: 4,
    arbitrary: activity.chain((name) =>
      fc.record({
        kind: fc.constant("broken" as const),
        activity: fc.constant(name),
        input: validInput(name),
        mutation: inputMutation,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...RECORD_ACTIVITIES).chain((name) =>
      fc.record({
        kind: fc.constant("foreign" as const),
        activity: fc.constant(name),
        input: validInput(name),
        whose: fc.constantFrom("otherInstance" as const, "unknownOrder" as const),
        id: identifier,
      }),
    ),
  },
);

/** Malformed inputs handed to each order activity as its host hands them over, on a record its attempt owns. */
export function activityTarget(
  options: { readonly handlers?: HandlerSource } = {},
): FuzzTarget<ActivityCase> {
  return {
    name: "activity inputs",
    arbitrary: fc.record({ inputs: fc.array(spec, { minLength: 1, maxLength: 3 }) }),
    open: async () => {
      const harness = await ActivityHarness.open(options.handlers);
      let runs = 0;
      return {
        run: async (value, tally) => {
          const ref = await harness.ownedOrder(`act-${++runs}`);
          for (const [index, input] of value.inputs.entries()) {
            const label = `input ${index + 1} (${input.kind} ${input.activity})`;
            try {
              const outcome = await within(label, handOver(harness, ref, input));
              if (outcome) tally.record(outcome);
            } catch (error) {
              if (error instanceof Error) error.message = `${label}: ${error.message}`;
              throw error;
            }
          }
        },
        close: async () => harness.close(),
      };
    },
  };
}

/** Hands one input to its activity and checks what came of it; null when the mutation fits no field. */
async function handOver(harness: ActivityHarness, ref: AttemptRef, spec: InputSpec): Promise<Outcome | null> {
  const handler = harness.handlers.get(spec.activity);
  if (!handler) throw new Error(`no activity ${spec.activity} is registered`);
  const effectsBefore = { ...harness.effects };
  const mark = harness.writes.mark();
  if (spec.kind === "foreign") {
    const other =
      spec.whose === "unknownOrder" ? { orderId: `none-${spec.id}`.slice(0, 64), attempt: 1 } : ref;
    const instanceId =
      spec.whose === "unknownOrder" ? `${other.orderId}:1` : `${ref.orderId}:${ref.attempt + 1}`;
    const result = await handler(
      forAttempt(
        spec.input,
        { ...other, instanceId, attempt: ref.attempt + 1 },
        ACTIVITY_SHAPES[spec.activity],
      ),
    );
    expectUntouched(harness, mark, effectsBefore, () => `a ${spec.whose} input (answered ${shown(result)})`);
    return "dropped";
  }
  const broken = applyInputMutation(
    forAttempt(spec.input, ref, ACTIVITY_SHAPES[spec.activity]),
    ACTIVITY_SHAPES[spec.activity],
    spec.mutation,
  );
  if (!broken) return null;
  const error = await handler(broken.input).then(
    (result) => ({ accepted: result }),
    (thrown: unknown) => thrown,
  );
  const message = error instanceof Error ? error.message : "";
  expectThat(
    message.includes(`input of activity ${spec.activity}`) && message.includes(`${broken.field}: `),
    () =>
      `a broken input (${broken.field}) was not refused naming it: ${shown(error instanceof Error ? message : error)}`,
  );
  expectUntouched(harness, mark, effectsBefore, () => `a broken input (${broken.field})`);
  return "refused";
}

function expectUntouched(
  harness: ActivityHarness,
  mark: number,
  before: SideEffects,
  what: () => string,
): void {
  const writes = harness.writes.since(mark);
  expectThat(writes.length === 0, () => `${what()} wrote ${shown(writes)}`);
  const effects = harness.effects;
  expectThat(
    effects.agentCalls === before.agentCalls &&
      effects.requestsSent === before.requestsSent &&
      effects.settled === before.settled,
    () => `${what()} had side effects: ${shown({ before, after: effects })}`,
  );
}
