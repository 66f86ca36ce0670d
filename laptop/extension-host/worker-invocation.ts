import type { Logger } from "../../src/ports/logger.js";
import { type CapturedFunction, programmingModel, triggerOf } from "../worker/registration-capture.js";

/** The worker protocol's typed data (RpcTypedData) as it travels on the channel: bytes as base64. */
export interface TypedData {
  readonly string?: string;
  readonly json?: string;
  readonly int?: number;
  readonly double?: number;
  readonly bytes?: string;
}

/** One invocation the extension host asks for: the trigger's data and, by binding type, the other inputs'. */
export interface InvocationRequest {
  readonly invocationId: string;
  readonly trigger: TypedData;
  readonly inputs?: Readonly<Record<string, TypedData>> | null;
}

export type InvocationResult =
  | { readonly ok: true; readonly returnValue: TypedData | null }
  | { readonly ok: false; readonly error: string; readonly stack: string };

/** The parts of `@azure/functions`' programming model a worker drives (its InvocationModel). */
interface InvocationModel {
  getArguments(): Promise<{ context: unknown; inputs: unknown[] }>;
  invokeFunction(context: unknown, inputs: unknown[], handler: CapturedFunction["handler"]): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<{ returnValue?: unknown }>;
}

interface ProgrammingModel {
  getInvocationModel(coreContext: unknown): InvocationModel;
}

/**
 * Runs one invocation as the Node.js worker runs it: the request's typed data handed to the programming
 * model `@azure/functions` registered, which converts it to the handler's arguments (a `string` is parsed
 * as JSON when it is JSON, `json` always), calls the handler, and converts its return value back to typed
 * data. A handler that throws is a failure with its message and stack, as the worker reports it.
 */
export async function runInvocation(
  fn: CapturedFunction,
  request: InvocationRequest,
  logger: Logger,
): Promise<InvocationResult> {
  try {
    const model = modelOf().getInvocationModel(coreContextFor(fn, request, logger));
    const { context, inputs } = await model.getArguments();
    const result = await model.invokeFunction(context, inputs, fn.handler);
    const response = await model.getResponse(context, result);
    return { ok: true, returnValue: onChannel(response.returnValue) };
  } catch (error) {
    return {
      ok: false,
      error: error instanceof Error ? error.message : String(error),
      stack: error instanceof Error ? (error.stack ?? "") : "",
    };
  }
}

function modelOf(): ProgrammingModel {
  const model = programmingModel() as ProgrammingModel | undefined;
  if (!model) throw new Error("@azure/functions has not given the worker its programming model");
  return model;
}

/** The context the worker gives the programming model: the function's metadata and the request's input data. */
function coreContextFor(fn: CapturedFunction, request: InvocationRequest, logger: Logger) {
  const trigger = triggerOf(fn);
  const inputData = [{ name: trigger?.name, data: request.trigger }];
  for (const [name, binding] of Object.entries(fn.metadata.bindings)) {
    const data = request.inputs?.[binding.type];
    if (binding !== trigger && binding.direction === "in" && data) inputData.push({ name, data });
  }
  const functionName = fn.name;
  return {
    invocationId: request.invocationId,
    state: "invocation",
    metadata: fn.metadata,
    request: { invocationId: request.invocationId, functionId: fn.name, inputData, triggerMetadata: {} },
    log: (level: string, _category: string, message: string) =>
      logger.debug("function.log", { functionName, level, message }),
  };
}

/** Typed data for the channel's JSON: bytes as base64. */
function onChannel(value: unknown): TypedData | null {
  if (value === null || value === undefined) return null;
  const typed = value as Omit<TypedData, "bytes"> & { readonly bytes?: unknown };
  if (typed.bytes instanceof Uint8Array) return { bytes: Buffer.from(typed.bytes).toString("base64") };
  return typed as TypedData;
}
