import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const CLI = join(import.meta.dirname, "../../laptop/cli/main.ts");

describe("sas start", () => {
  it("finishes its demo batch, then accepts and processes an order over HTTP, and stops on SIGINT", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        CLI,
        "start",
        "--port",
        "0",
        "--data",
        ":memory:",
        "--demo-orders",
        "5",
        "--slow",
        "0",
        // Not the default 7080: another test file may hold it while this one runs.
        "--store-port",
        "0",
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env } },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          // The addresses are printed first, the demo batch's end after them.
          const match = /serving (http:\/\/[\d.]+:\d+)[\s\S]*demo batch finished/.exec(stdout);
          if (match?.[1]) {
            clearInterval(timer);
            resolve(match[1]);
          }
        }, 50);
        void exited.then((code) => {
          clearInterval(timer);
          reject(new Error(`sas start exited (${code}) early: ${stdout}\n${stderr}`));
        });
      });
      expect(stdout).toContain("submitted a demo batch of 5 orders");
      // F27: the addresses before the demo batch, not after it settles.
      expect(stdout.indexOf("dashboard:")).toBeGreaterThan(-1);
      expect(stdout.indexOf("dashboard:")).toBeLessThan(stdout.indexOf("submitted a demo batch"));
      expect(stdout).not.toContain("\r");
      expect(stdout).toContain("demo batch finished");

      const order = {
        schemaVersion: 1,
        orderId: "ord-http-1",
        customerId: "cust-1",
        currency: "EUR",
        items: [{ sku: "SKU-1", quantity: 1, unitPriceMinor: 500 }],
      };
      const posted = await fetch(`${url}/api/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(order),
      });
      expect(posted.status).toBe(202);
      let state = "";
      for (
        let i = 0;
        i < 200 && !["Processed", "Error", "Compensated", "CompensationFailed"].includes(state);
        i++
      ) {
        const got = await fetch(`${url}/api/orders/ord-http-1`);
        state = got.status === 200 ? ((await got.json()) as { processState: string }).processState : "";
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(["Processed", "Error", "Compensated"]).toContain(state);
      const invalid = await fetch(`${url}/api/orders`, {
        method: "POST",
        body: JSON.stringify({ ...order, currency: "euro" }),
      });
      expect(invalid.status).toBe(400);
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    expect(stdout).toContain("stopping...");
  }, 60_000);
});
