import type { OrchestrationContext, Task } from "durable-functions";
import type { ZodType } from "zod";
import { validate } from "../domain/validation.js";
import type { DurableClient } from "../ports/durable-client.js";

/**
 * One activity as both sides of the durable boundary see it: the name it is registered and called
 * under, the schema its input must satisfy when it arrives (as JSON, from the durable store), and the
 * type of what it returns. Defined once; the orchestrator calls through it and each host binds an
 * implementation to it, so a renamed field fails to compile on both sides.
 */
export interface ActivityContract<Input, Output> {
  readonly name: string;
  readonly input: ZodType<Input>;
  /** Never set: carries the result type. */
  readonly output?: Output;
}

/** `activity<Result>()(name, inputSchema)`: the result type is given, the input type comes from the schema. */
export function activity<Output>() {
  return <Input>(name: string, input: ZodType<Input>): ActivityContract<Input, Output> => ({ name, input });
}

// biome-ignore lint/suspicious/noExplicitAny: a contract of any input and output, for constraints only
type AnyContract = ActivityContract<any, any>;
export type ContractSet = Readonly<Record<string, AnyContract>>;
export type InputOf<C> = C extends ActivityContract<infer Input, unknown> ? Input : never;
export type OutputOf<C> = C extends ActivityContract<unknown, infer Output> ? Output : never;

/** What an activity gets besides its input: the durable client of its own invocation, from its binding. */
export interface ActivityInvocation {
  readonly durableClient: () => DurableClient;
}

/** One implementation per contract, each typed by it. */
export type ActivityImplementations<Contracts extends ContractSet> = {
  readonly [K in keyof Contracts]: (
    input: InputOf<Contracts[K]>,
    invocation: ActivityInvocation,
  ) => Promise<OutputOf<Contracts[K]>>;
};

/** The orchestrator's side: one function per activity, to call with `yield*`, typed by its contract. */
export type ActivityProxy<Contracts extends ContractSet> = {
  readonly [K in keyof Contracts]: (
    input: InputOf<Contracts[K]>,
  ) => Generator<Task, OutputOf<Contracts[K]>, unknown>;
};

export function proxyActivities<Contracts extends ContractSet>(
  context: OrchestrationContext,
  contracts: Contracts,
): ActivityProxy<Contracts> {
  const proxy: Record<string, (input: unknown) => Generator<Task, unknown, unknown>> = {};
  for (const [key, contract] of Object.entries(contracts)) {
    proxy[key] = function* (input) {
      return yield scheduleActivity(context, contract, input);
    };
  }
  return proxy as ActivityProxy<Contracts>;
}

/**
 * An activity's durable task, scheduled and not yet awaited, so that it can race a timer (`Task.any`).
 * Its result is the contract's output once the task completed without fault; a faulted task's result
 * is its error, so read `isFaulted` first.
 */
export interface ActivityTask<Output> extends Task {
  readonly result: Output;
}

/** Schedules the activity of `contract` with `input`, for the caller to yield or race. */
export function scheduleActivity<Input, Output>(
  context: OrchestrationContext,
  contract: ActivityContract<Input, Output>,
  input: Input,
): ActivityTask<Output> {
  // The one place the result type is asserted: each activity's result is its contract's output type.
  return context.df.callActivity(contract.name, input) as ActivityTask<Output>;
}

/** An implementation bound to its contract: the input is validated before the implementation sees it. */
export interface BoundActivity {
  readonly name: string;
  readonly handler: (input: unknown, invocation: ActivityInvocation) => Promise<unknown>;
}

export function bindActivities<Contracts extends ContractSet>(
  contracts: Contracts,
  implementations: ActivityImplementations<Contracts>,
): BoundActivity[] {
  return Object.keys(contracts).map((key) =>
    bindActivity(contracts[key] as AnyContract, implementations[key]),
  );
}

function bindActivity<Input, Output>(
  contract: ActivityContract<Input, Output>,
  implementation: ((input: Input, invocation: ActivityInvocation) => Promise<Output>) | undefined,
): BoundActivity {
  if (!implementation) throw new Error(`no implementation for activity ${contract.name}`);
  return {
    name: contract.name,
    handler: async (input, invocation) => {
      const parsed = validate(`input of activity ${contract.name}`, contract.input, input);
      if (!parsed.ok) throw parsed.error;
      return implementation(parsed.value, invocation);
    },
  };
}
