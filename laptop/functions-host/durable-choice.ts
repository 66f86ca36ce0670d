import { type DotnetSdk, findDotnetSdk, MINIMUM_DOTNET_MAJOR } from "../extension-host/dotnet-sdk.js";
import { DURABLE_ENGINES, type DurableEngineName } from "./durable-engines.js";

export type DurableChoice =
  | { readonly engine: DurableEngineName; readonly line: string }
  | { readonly refused: string };

/**
 * Which engine `sas host` runs the orchestrations on, and the line that says so first: Microsoft's
 * extension wherever a .NET SDK 8 or later is installed (it builds the extension host), the local
 * durable runtime where none is or when `--durable local` asks for it. `--durable extension` without
 * an SDK is refused rather than quietly run on the other engine.
 */
export function chooseDurableEngine(
  flag: string | undefined,
  sdk: () => DotnetSdk = findDotnetSdk,
): DurableChoice {
  if (flag !== undefined && !(DURABLE_ENGINES as readonly string[]).includes(flag))
    return { refused: `--durable ${flag}: give ${DURABLE_ENGINES.join(" or ")}` };
  if (flag === "local")
    return { engine: "local", line: "sas host: durable engine: the local durable runtime (--durable local)" };
  const found = sdk();
  if (found.found) {
    return {
      engine: "extension",
      line: `sas host: durable engine: Microsoft's Durable Task extension, on .NET SDK ${found.version}${flag ? "" : " (--durable local for the local durable runtime)"}`,
    };
  }
  if (flag === "extension")
    return {
      refused: `--durable extension needs the .NET SDK ${MINIMUM_DOTNET_MAJOR} or later: ${found.why}`,
    };
  return {
    engine: "local",
    line: `sas host: durable engine: the local durable runtime, since no .NET SDK ${MINIMUM_DOTNET_MAJOR} or later is here (${found.why}); with one, Microsoft's Durable Task extension`,
  };
}
