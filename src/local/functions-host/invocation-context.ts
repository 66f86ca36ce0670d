import { randomUUID } from "node:crypto";
import azureFunctions, { type InvocationContext } from "@azure/functions";
import type { Logger } from "../../ports/logger.js";
import { type BindingMetadata, type CapturedFunction, triggerOf } from "../registration-capture.js";

/** The data the host gives an input binding that is not the trigger (a durable client's, ...), if any. */
export type BindingData = (binding: BindingMetadata) => unknown;

export interface InvocationInit {
  readonly triggerMetadata?: Record<string, unknown>;
  readonly bindingData?: BindingData;
  readonly logger: Logger;
}

/**
 * An invocation context as the Node.js worker builds one: the function's name, a fresh invocation id,
 * the trigger's metadata, and each extra input's data under its binding name (what `df.getClient`
 * reads); what the function logs through the context goes to the host's log at debug level.
 */
export function invocationContextFor(fn: CapturedFunction, init: InvocationInit): InvocationContext {
  const functionName = fn.name;
  const trigger = triggerOf(fn);
  const named = Object.values(fn.metadata.bindings).filter(
    (binding): binding is BindingMetadata & { name: string } => binding !== trigger && !!binding.name,
  );
  const extraInputs = named.filter((binding) => binding.direction === "in");
  const context = new azureFunctions.InvocationContext({
    functionName,
    invocationId: randomUUID(),
    ...(init.triggerMetadata ? { triggerMetadata: init.triggerMetadata } : {}),
    logHandler: (level, ...args) =>
      init.logger.debug("function.log", { functionName, level, message: args.join(" ") }),
    // What `df.getClient` looks its binding up in.
    options: {
      ...(trigger?.name ? { trigger: { ...trigger, name: trigger.name } } : {}),
      extraInputs,
      extraOutputs: named.filter((binding) => binding.direction === "out"),
    },
  });
  for (const binding of extraInputs) {
    const data = init.bindingData?.(binding);
    if (data !== undefined) context.extraInputs.set(binding.name, data);
  }
  return context;
}
