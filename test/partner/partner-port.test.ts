import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { openLedgerFile } from "../../partner/ledger-file.js";
import { startPartnerService } from "../../partner/partner-service.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { PortInUseError } from "../../src/adapters/web/listen-or-refuse.js";

const ROOT = join(import.meta.dirname, "../..");

const holders: Server[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const holder of holders.splice(0)) await new Promise((resolve) => holder.close(resolve));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A port held by a server of the test's own, as another program would hold it. */
async function heldPort(): Promise<number> {
  const holder = createServer();
  holders.push(holder);
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  return (holder.address() as { port: number }).port;
}

describe("the simulated partner on a taken port", () => {
  it("refuses to start with a PortInUseError naming the port, the address and the way out it is given", async () => {
    const port = await heldPort();
    const refusal = await startPartnerService({
      port,
      portRemedy: "choose another with --port",
      clock: new VirtualClock(),
      logger: new MemoryLogger(),
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PortInUseError);
    expect(String(refusal)).toContain(
      `port ${port} on 127.0.0.1 is already in use: stop what holds it, or choose another with --port`,
    );
  });

  it("sas partner --port: one line naming the port, exit status 2, its ledger file closed", {
    timeout: 60_000,
  }, async () => {
    const port = await heldPort();
    const folder = mkdtempSync(join(tmpdir(), "sas-partner-port-"));
    folders.push(folder);
    const ledger = join(folder, "ledger.db");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "laptop/cli/main.ts", "partner", "--port", String(port), "--ledger", ledger],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk) => {
      stdout += String(chunk);
    });
    child.stderr?.on("data", (chunk) => {
      stderr += String(chunk);
    });
    // Exiting on its own is the proof that nothing was left running.
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain(
      `sas partner: port ${port} on 127.0.0.1 is already in use: stop what holds it, or choose another with --port\n`,
    );
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(stdout).toBe("");
    // The ledger it had opened was closed cleanly: it opens again, empty.
    const reopened = openLedgerFile(ledger);
    expect(reopened.restoredEvents).toBe(0);
    reopened.close();
  });
});
