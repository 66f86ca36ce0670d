import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";

/** The C# project of the extension host. */
export const PROJECT_DIR = join(import.meta.dirname, "dotnet");
const PROJECT = join(PROJECT_DIR, "ExtensionHost.csproj");
/** Builds are kept here, one folder per hash of the project's sources: every start and test reuses them. */
export const BUILD_ROOT = join(import.meta.dirname, "..", "..", ".build", "extension-host");
const DLL = "ExtensionHost.dll";
const COMPLETE = ".complete";

export interface ExtensionBuild {
  readonly dll: string;
  /** False when an earlier build of the same sources was reused. */
  readonly built: boolean;
}

/** A hash of the project's sources (the project, its lock file, every .cs file), naming its build. */
export function sourceHash(): string {
  const hash = createHash("sha256");
  const files = readdirSync(PROJECT_DIR)
    .filter((name) => name.endsWith(".cs") || name.endsWith(".csproj") || name === "packages.lock.json")
    .sort();
  for (const name of files) {
    hash.update(`${name}\0`);
    hash.update(readFileSync(join(PROJECT_DIR, name)));
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/**
 * The extension host built from the current sources: reused when a build of them exists, else restored
 * (from NuGet, the versions the lock file pins) and built, under a lock so that two starts or two
 * test files build once between them.
 */
export async function buildExtensionHost(
  onBuild: (message: string) => void = () => {},
): Promise<ExtensionBuild> {
  const output = join(BUILD_ROOT, sourceHash());
  const dll = join(output, DLL);
  if (existsSync(join(output, COMPLETE))) return { dll, built: false };
  mkdirSync(BUILD_ROOT, { recursive: true });
  const release = await lock(join(BUILD_ROOT, ".lock"));
  try {
    if (existsSync(join(output, COMPLETE))) return { dll, built: false };
    onBuild(
      `building the extension host into ${relative(process.cwd(), output) || "."} (once per change of its sources)`,
    );
    const staging = `${output}.staging`;
    rmSync(staging, { recursive: true, force: true });
    await dotnet(["restore", PROJECT, "--locked-mode", "-v", "q"]);
    await dotnet(["build", PROJECT, "--no-restore", "-c", "Release", "-o", staging, "--nologo", "-v", "q"]);
    writeFileSync(join(staging, COMPLETE), `${new Date().toISOString()}\n`);
    rmSync(output, { recursive: true, force: true });
    renameSync(staging, output);
    return { dll, built: true };
  } finally {
    release();
  }
}

function dotnet(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("dotnet", args, {
      env: { ...process.env, DOTNET_NOLOGO: "1", DOTNET_CLI_TELEMETRY_OPTOUT: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("error", (error) => reject(new Error(`dotnet ${args[0]}: ${error.message}`)));
    child.once("exit", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`dotnet ${args.join(" ")} failed (${code}):\n${output.trim()}`));
    });
  });
}

/** A lock file holding its owner's pid; one whose owner has died is taken over. */
async function lock(path: string): Promise<() => void> {
  for (;;) {
    try {
      const fd = openSync(path, "wx");
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (!ownerAlive(path)) rmSync(path, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

function ownerAlive(path: string): boolean {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return true;
  }
  // Empty: its owner has created it and not yet written its pid, unless that was long ago.
  if (text === "") return Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 10_000;
  const pid = Number(text);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
