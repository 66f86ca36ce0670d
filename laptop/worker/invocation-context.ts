import { randomUUID } from "node:crypto";
import azureFunctions, { type InvocationContext } from "@azure/functions";
import type { Logger } from "../../src/ports/logger.js";
import { type BindingMetadata, type CapturedFunction, triggerOf } from "./registration-capture.js";

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
  const options = optionsOf(fn);
  const context = new azureFunctions.InvocationContext({
    functionName: fn.name,
    invocationId: randomUUID(),
    ...(init.triggerMetadata ? { triggerMetadata: init.triggerMetadata } : {}),
    logHandler: logHandlerOf(fn, init.logger),
    options,
  });
  if (!init.bindingData) return context;
  for (const binding of options.extraInputs) {
    const data = init.bindingData(binding);
    if (data !== undefined) context.extraInputs.set(binding.name, data);
  }
  return context;
}

type LogHandler = (level: string, ...args: unknown[]) => void;

/** Each function's log handler, per logger: made once rather than a closure on every invocation. */
const logHandlers = new WeakMap<CapturedFunction, WeakMap<Logger, LogHandler>>();

function logHandlerOf(fn: CapturedFunction, logger: Logger): LogHandler {
  let byLogger = logHandlers.get(fn);
  if (!byLogger) {
    byLogger = new WeakMap();
    logHandlers.set(fn, byLogger);
  }
  let handler = byLogger.get(logger);
  if (!handler) {
    const functionName = fn.name;
    handler = (level, ...args) =>
      logger.debug("function.log", { functionName, level, message: args.join(" ") });
    byLogger.set(logger, handler);
  }
  return handler;
}

type NamedBinding = BindingMetadata & { readonly name: string };

interface FunctionOptions {
  readonly trigger?: NamedBinding;
  readonly extraInputs: NamedBinding[];
  readonly extraOutputs: NamedBinding[];
}

/** The options `df.getClient` looks its binding up in, worked out once per function: activities run often. */
const optionsByFunction = new WeakMap<CapturedFunction, FunctionOptions>();

function optionsOf(fn: CapturedFunction): FunctionOptions {
  const known = optionsByFunction.get(fn);
  if (known) return known;
  const trigger = triggerOf(fn);
  const named = Object.values(fn.metadata.bindings).filter(
    (binding): binding is NamedBinding => binding !== trigger && !!binding.name,
  );
  const options: FunctionOptions = {
    ...(trigger?.name ? { trigger: { ...trigger, name: trigger.name } } : {}),
    extraInputs: named.filter((binding) => binding.direction === "in"),
    extraOutputs: named.filter((binding) => binding.direction === "out"),
  };
  optionsByFunction.set(fn, options);
  return options;
}
