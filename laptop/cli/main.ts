#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CHAOS } from "./chaos-command.js";
import type { Command } from "./command.js";
import { DEMO } from "./demo-command.js";
import { HOST } from "./host-command.js";
import { KEYS } from "./keys-command.js";
import { ORDERS } from "./orders-command.js";
import { PARTNER } from "./partner-command.js";
import { SEND } from "./send-command.js";
import { SOAK } from "./soak-command.js";
import { START } from "./start-command.js";
import { STATS } from "./stats-command.js";
import { UsageError } from "./usage-error.js";

/** Every command, in the order the usage lists them; each loads its heavy modules only when it runs. */
const COMMANDS: readonly Command[] = [START, DEMO, HOST, PARTNER, SEND, ORDERS, STATS, KEYS, CHAOS, SOAK];

const NAME_WIDTH = Math.max(...COMMANDS.map((command) => command.name.length)) + 2;

const USAGE = `usage: sas <command> [flags]

commands:
${COMMANDS.map(
  (command) =>
    `  ${command.name.padEnd(NAME_WIDTH)}${command.summary.join(`\n  ${" ".repeat(NAME_WIDTH)}`)}\n`,
).join("")}
sas <command> --help shows the command's own flags.
`;

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  try {
    if (command === undefined) throw new UsageError(`unknown command ${name}`);
    return await command.run(rest);
  } catch (error) {
    return reportRefusal(error, command, rest);
  }
}

/**
 * A command line that cannot run: one line naming what is wrong (a flag as it was typed), one line
 * pointing to the command's `--help`, exit status 2; a setting that cannot be used: its message, exit
 * status 2; a port that something else holds (a `PortInUseError`, from laptop/http or the storefront):
 * one line naming the command, the port and the address, exit status 2, the command having closed what
 * it had started. Anything else is a failure, not a refusal, and goes on.
 */
function reportRefusal(error: unknown, command: Command | undefined, args: readonly string[]): number {
  if (error instanceof UsageError || isParseArgsError(error)) {
    const who = command ? `sas ${command.name}` : "sas";
    const message = error instanceof UsageError ? error.message : describeFlagError(error, args);
    process.stderr.write(
      `${who}: ${message}\nrun '${who} --help' for ${command ? "its flags" : "the commands"}\n`,
    );
    return 2;
  }
  if (error instanceof Error && error.name === "SettingsError") {
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  if (error instanceof Error && error.name === "PortInUseError") {
    process.stderr.write(`${command ? `sas ${command.name}` : "sas"}: ${error.message}\n`);
    return 2;
  }
  throw error;
}

/** A flag `parseArgs` refuses: unknown, missing its value, or a positional where none is taken. */
function isParseArgsError(error: unknown): error is Error & { code: string } {
  return (
    error instanceof Error &&
    "code" in error &&
    typeof error.code === "string" &&
    error.code.startsWith("ERR_PARSE_ARGS")
  );
}

/** `parseArgs`'s refusal in the command line's own words, naming the argument as it was typed. */
export function describeFlagError(error: Error & { code: string }, args: readonly string[]): string {
  const quoted = /'([^' ]+)/.exec(error.message)?.[1] ?? "";
  const typed = args.find((arg) => arg === quoted || arg.startsWith(`${quoted}=`)) ?? quoted;
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown flag ${typed}`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument ${typed}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return error.message.includes("argument missing")
        ? `${quoted} needs a value`
        : `${typed}: ${quoted} takes no value`;
    default:
      return error.message;
  }
}

/** Run as a program (`sas`, or `node cli.js` through a symlink as npm links bins), not imported. */
function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
