import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../laptop/cli/main.js";
import { captureOutput } from "../support/captured-output.js";

const ROOT = join(import.meta.dirname, "../..");

describe("sas start and the storefront's flags", () => {
  const output = captureOutput();

  it("documents --store-port and --no-store in its usage", async () => {
    expect(await main(["start", "--help"])).toBe(0);
    expect(output.stdout).toMatch(/--store-port <n> +the storefront's port \(default 7080\)/);
    expect(output.stdout).toMatch(/--no-store +no storefront/);
  });

  it.each([
    [["--no-store", "--store-port", "7081"], "give --store-port or --no-store, not both"],
    [["--port", "7090", "--store-port", "7090"], "--store-port 7090 is the HTTP API's port"],
    [["--store-port", "seventy"], "--store-port must be an integer"],
  ])("refuses %j before it opens anything", async (flags, message) => {
    expect(await main(["start", "--data", ":memory:", ...flags])).toBe(2);
    expect(output.stderr).toContain(message);
  });
});

describe("sas start on a taken storefront port", () => {
  let blocker: Server | undefined;
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child?.exitCode === null) child.kill("SIGKILL");
    await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
  });

  it("stops start-up with a message naming the port, exit status 2, and leaves nothing running", {
    timeout: 60_000,
  }, async () => {
    const server = createServer();
    blocker = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "laptop/cli/main.ts",
        "start",
        "--data",
        ":memory:",
        "--demo-orders",
        "0",
        "--port",
        "0",
        "--store-port",
        String(port),
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    const started = child;
    let output = "";
    started.stdout?.on("data", (chunk) => {
      output += String(chunk);
    });
    started.stderr?.on("data", (chunk) => {
      output += String(chunk);
    });
    // Exiting on its own is the proof that nothing was left running: no server, thread or timer holds it.
    const code = await new Promise<number | null>((resolve) => started.once("exit", resolve));
    expect(code).toBe(2);
    expect(output).toContain(`sas start: port ${port} on 127.0.0.1 is already in use`);
  });
});
