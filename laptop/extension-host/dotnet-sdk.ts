import { spawnSync } from "node:child_process";

/** The oldest .NET the extension host builds and runs on (it targets net8.0 and rolls forward). */
export const MINIMUM_DOTNET_MAJOR = 8;

export type DotnetSdk =
  | { readonly found: true; readonly version: string }
  | { readonly found: false; readonly why: string };

/** The newest .NET SDK installed, when it is 8 or later; otherwise why there is none to use. */
export function findDotnetSdk(): DotnetSdk {
  const listed = spawnSync("dotnet", ["--list-sdks"], {
    encoding: "utf8",
    env: { ...process.env, DOTNET_NOLOGO: "1", DOTNET_CLI_TELEMETRY_OPTOUT: "1" },
    timeout: 30_000,
  });
  if (listed.error) return { found: false, why: `no dotnet command (${listed.error.message})` };
  if (listed.status !== 0) return { found: false, why: `dotnet --list-sdks failed (${listed.status})` };
  return newestSdk(listed.stdout);
}

/** From `dotnet --list-sdks` output: `10.0.401 [/usr/share/dotnet/sdk]` a line. */
export function newestSdk(listing: string): DotnetSdk {
  const versions = listing
    .split("\n")
    .map((line) => /^(\d+)\.(\d+)\.(\d+)\S*/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ text: match[0], parts: match.slice(1, 4).map(Number) }))
    .sort((a, b) => compare(b.parts, a.parts));
  const newest = versions[0];
  if (!newest) return { found: false, why: "dotnet lists no SDK" };
  if ((newest.parts[0] ?? 0) < MINIMUM_DOTNET_MAJOR)
    return { found: false, why: `the newest .NET SDK is ${newest.text}, older than ${MINIMUM_DOTNET_MAJOR}` };
  return { found: true, version: newest.text };
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
