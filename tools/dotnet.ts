/** Runs the .NET SDK for the checks in tools/: restores and builds quietly, with output cached under tools/. */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const TOOLS_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT_DIR = join(TOOLS_DIR, "..");

const QUIET_ENV = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: "1", DOTNET_NOLOGO: "1" };

export interface RunResult {
  readonly status: number;
  readonly output: string;
}

/** Runs a command, collecting stdout and stderr together; a command that cannot start has status 127. */
export function run(command: string, args: readonly string[]): RunResult {
  const result = spawnSync(command, args, { encoding: "utf8", env: QUIET_ENV, maxBuffer: 64 * 1024 * 1024 });
  if (result.error) return { status: 127, output: `${command}: ${result.error.message}` };
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
}

/** Runs dotnet, or exits with its output when it fails. */
export function dotnetOrExit(args: readonly string[], what: string): string {
  const result = run("dotnet", args);
  if (result.status !== 0) {
    process.stderr.write(`${result.output}\n${what} failed (dotnet ${args.join(" ")})\n`);
    process.exit(result.status === 127 ? 127 : 1);
  }
  return result.output;
}

/** The Bicep CLI restored from NuGet at the version tools/bicep/bicep.csproj pins. */
export function restoreBicep(): { path: string; version: string } {
  const project = join(TOOLS_DIR, "bicep", "bicep.csproj");
  const version = /Include="Azure\.Bicep\.CommandLine\.linux-x64" Version="\[([^\]]+)\]"/.exec(
    readFileSync(project, "utf8"),
  )?.[1];
  if (!version) throw new Error(`${project}: no pinned Azure.Bicep.CommandLine.linux-x64 version`);
  dotnetOrExit(["restore", project, "--locked-mode", "-v", "q"], "restoring the Bicep CLI");
  const path = join(
    TOOLS_DIR,
    ".nuget",
    "packages",
    "azure.bicep.commandline.linux-x64",
    version,
    "tools",
    "bicep",
  );
  return { path, version };
}
