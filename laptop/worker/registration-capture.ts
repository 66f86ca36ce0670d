import Module from "node:module";

/** A function as `@azure/functions` hands it to the Functions host: its metadata and its handler. */
export interface CapturedFunction {
  readonly name: string;
  readonly metadata: FunctionMetadata;
  readonly handler: (triggerInput: unknown, context: unknown) => unknown;
}

export interface BindingMetadata {
  readonly type: string;
  readonly direction: "in" | "out";
  readonly name?: string;
  readonly [setting: string]: unknown;
}

export interface FunctionMetadata {
  readonly name: string;
  readonly bindings: Readonly<Record<string, BindingMetadata>>;
  readonly [setting: string]: unknown;
}

/** Every function an app registered, by name, with lookups by trigger type. */
export class FunctionRegistry {
  private readonly byName = new Map<string, CapturedFunction>();

  add(fn: CapturedFunction): void {
    if (this.byName.has(fn.name)) throw new Error(`function ${fn.name} was registered twice`);
    this.byName.set(fn.name, fn);
  }

  get(name: string): CapturedFunction | undefined {
    return this.byName.get(name);
  }

  all(): CapturedFunction[] {
    return [...this.byName.values()];
  }

  /** The functions whose trigger binding has this type (`orchestrationTrigger`, `activityTrigger`, ...). */
  withTrigger(type: string): CapturedFunction[] {
    return this.all().filter((fn) => triggerOf(fn)?.type === type);
  }
}

export function triggerOf(fn: CapturedFunction): BindingMetadata | undefined {
  return Object.values(fn.metadata.bindings).find((b) => b.direction === "in" && b.type.endsWith("Trigger"));
}

const CORE_MODULE = "@azure/functions-core";
let sink: ((fn: CapturedFunction) => void) | undefined;
let model: unknown;

/**
 * The programming model `@azure/functions` gave the worker when the app registered its first function:
 * what turns a worker's invocation (typed data in, typed data out) into a call of the handler.
 */
export function programmingModel(): unknown {
  return model;
}

/**
 * Stands in for the module the Functions host's Node.js worker provides to `@azure/functions`. The
 * package registers every function through it, so whoever holds it sees exactly what the host would.
 */
const coreStandIn = {
  setProgrammingModel(given: unknown): void {
    model = given;
  },
  getProgrammingModel(): unknown {
    return model;
  },
  registerFunction(metadata: FunctionMetadata, handler: CapturedFunction["handler"]) {
    if (!sink) {
      throw new Error(`function ${metadata.name} was registered outside captureRegistrations()`);
    }
    sink({ name: metadata.name, metadata, handler });
    return { dispose(): void {} };
  },
  registerHook() {
    return { dispose(): void {} };
  },
  log(): void {},
};

let installed = false;

/** Makes `require("@azure/functions-core")` answer with the stand-in. Must run before any registration. */
function installCoreStandIn(): void {
  if (installed) return;
  installed = true;
  const loader = Module as unknown as {
    _load: (request: string, parent: unknown, isMain: boolean) => unknown;
  };
  const load = loader._load;
  loader._load = function (this: unknown, request: string, parent: unknown, isMain: boolean) {
    return request === CORE_MODULE ? coreStandIn : load.call(this, request, parent, isMain);
  };
}

installCoreStandIn();

/**
 * Runs `register` (code that calls `app.*` and `df.app.*` as an Azure Functions app does) and returns
 * what it registered, handlers included, without a Functions host.
 */
export async function captureRegistrations(register: () => unknown): Promise<FunctionRegistry> {
  if (sink) throw new Error("captureRegistrations() is already running");
  const registry = new FunctionRegistry();
  sink = (fn) => registry.add(fn);
  try {
    await register();
  } finally {
    sink = undefined;
  }
  return registry;
}
