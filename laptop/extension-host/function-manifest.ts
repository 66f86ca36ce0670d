import { type FunctionRegistry, triggerOf } from "../worker/registration-capture.js";

/** One of the app's durable functions, as the extension host emits a stub for it. */
export interface DurableFunctionSpec {
  readonly name: string;
  readonly kind: "orchestration" | "activity" | "entity";
  /** The function takes a durable client input (`df.input.durableClient()`). */
  readonly durableClient: boolean;
}

const KINDS: Readonly<Record<string, DurableFunctionSpec["kind"]>> = {
  orchestrationTrigger: "orchestration",
  activityTrigger: "activity",
  entityTrigger: "entity",
};

/** The extension host's own function (dotnet/HostFunctions.cs): no app function may take its name. */
export const HOST_FUNCTION = "sasDurableClientData";

/**
 * The app's orchestrations, activities and entities, from what it registered: what the extension host
 * indexes, so nothing about the app is kept by hand. A durable client bound to another task hub or
 * connection than the app's own is refused, since every client input here gets the one binding data
 * the extension gives the app's hub.
 */
export function durableFunctionsOf(registry: FunctionRegistry): DurableFunctionSpec[] {
  const specs: DurableFunctionSpec[] = [];
  for (const fn of registry.all()) {
    if (fn.name.toLowerCase() === HOST_FUNCTION.toLowerCase())
      throw new Error(`function ${fn.name}: the name is taken by the extension host's own function`);
    const bindings = Object.values(fn.metadata.bindings);
    for (const binding of bindings) {
      if (binding.type === "durableClient" && (binding.taskHub || binding.connectionName))
        throw new Error(
          `function ${fn.name}: a durable client of another task hub or connection is not run here (taskHub, connectionName)`,
        );
    }
    const type = triggerOf(fn)?.type ?? "";
    const kind = KINDS[type];
    if (!kind) continue;
    const durableClient = bindings.some(
      (binding) => binding.type === "durableClient" && binding.direction === "in",
    );
    if (durableClient && kind !== "activity")
      throw new Error(`function ${fn.name}: only an activity takes a durable client input here`);
    specs.push({ name: fn.name, kind, durableClient });
  }
  return specs;
}
