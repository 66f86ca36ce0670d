/**
 * `npm start`'s storefront passes `npm run smoke`: the embedded host in a child process as a user runs
 * it (the partner's default faults on), 50 orders placed through the storefront and followed to a final
 * state, the smoke command in a process of its own; then 20 more with the partner taken down for 5 s
 * through the host's operator API (`--outage`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

function run(args: readonly string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk) => {
    output.stdout += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    output.stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { child, output, exited };
}

/** Resolves with the first match of `pattern` in the child's output, or rejects when it exits first. */
function untilPrinted(
  started: ReturnType<typeof run>,
  pattern: RegExp,
  timeoutMs: number,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const timer = setInterval(() => {
      const match = pattern.exec(started.output.stdout);
      if (match) {
        clearInterval(timer);
        resolve(match);
      } else if (Date.now() > deadline) {
        clearInterval(timer);
        reject(new Error(`not printed within ${timeoutMs} ms: ${started.output.stdout}`));
      }
    }, 50);
    void started.exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`exited (${code}) early: ${started.output.stdout}\n${started.output.stderr}`));
    });
  });
}

function stop(child: ChildProcess) {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
}

describe("npm start's storefront", () => {
  it("passes npm run smoke with 50 orders, and with 20 and the partner down for 5 s", async () => {
    const host = run([
      ...["laptop/cli/main.ts", "start", "--port", "0", "--store-port", "0"],
      ...["--data", ":memory:", "--demo-orders", "0"],
    ]);
    try {
      const [, storeUrl] = await untilPrinted(host, /storefront: (http:\/\/[\d.]+:\d+)\/ /, 60_000);
      const smoke = run([
        ...["tools/smoke/smoke.ts", "--store", storeUrl ?? "", "--orders", "50"],
        ...["--timeout-seconds", "240", "--concurrency", "8"],
      ]);
      const status = await smoke.exited;
      expect(smoke.output.stderr).toBe("");
      expect(status, smoke.output.stdout).toBe(0);
      expect(smoke.output.stdout).toContain(`placed 50 of 50 orders through ${storeUrl}`);
      const counts =
        /all 50 reached a final state in [\d.]+ s: Processed (\d+), Error (\d+), Compensated (\d+), CompensationFailed (\d+)/.exec(
          smoke.output.stdout,
        );
      expect(counts?.slice(1).reduce((sum, n) => sum + Number(n), 0)).toBe(50);

      const [, apiUrl] = /serving (http:\/\/[\d.]+:\d+):/.exec(host.output.stdout) ?? [];
      const outage = run([
        ...["tools/smoke/smoke.ts", "--store", storeUrl ?? "", "--orders", "20", "--outage", "5"],
        ...["--api", apiUrl ?? "", "--timeout-seconds", "240", "--concurrency", "8"],
      ]);
      expect(await outage.exited, outage.output.stdout).toBe(0);
      expect(outage.output.stdout).toMatch(/^smoke: took the partner down for 5 s after 7 of 20 orders/);
      expect(outage.output.stdout).toMatch(
        /smoke: outage: the partner was down for 5 s after 7 of 20 orders were placed \(since .+\), answering again at /,
      );
      expect(outage.output.stdout).toContain("smoke: all 20 reached a final state");
    } finally {
      stop(host.child);
    }
    expect(await host.exited).toBe(0);
  }, 300_000);
});
