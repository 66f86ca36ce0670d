import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SUMMARY_INTERVAL_MS } from "../../laptop/functions-host/host-summary.js";
import {
  type BuiltApp,
  freePorts,
  type RunningHost,
  sendOrders,
  startHost,
  useBuiltApp,
  writeLocalSettings,
} from "./host-process.js";

/**
 * What `sas host` prints to a terminal (here a pipe, as when its output goes to a file): what it
 * started and its addresses, then a summary per change, with its JSON log in a file it names.
 */
const { built, hosts, dataFolder } = useBuiltApp();
let app: BuiltApp;
beforeAll(() => {
  app = built();
});

const FINAL = ["Processed", "Compensated", "Error", "CompensationFailed"];

async function finishedOrders(host: RunningHost): Promise<number> {
  const response = await fetch(`${host.url}/api/stats`, { headers: { "x-functions-key": host.functionKey } });
  const { counts } = (await response.json()) as { counts: Record<string, number> };
  return FINAL.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
}

const nonEmpty = (text: string) => text.split("\n").filter((line) => line.trim() !== "");

describe("sas host's terminal", () => {
  it("F27-1: names the dashboard with its key in its first lines, and prints under 100 lines for 200 orders, the log in its file", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports);
    const data = dataFolder();
    const host = await startHost(app, ports, data, { logLevel: null });
    hosts.push(host);
    const first = nonEmpty(host.stdout()).slice(0, 15);
    const dashboard = `sas host: dashboard on ${host.url}/api/dashboard?code=${host.functionKey}`;
    expect(first).toContain(dashboard);
    expect(first).toContainEqual(expect.stringContaining(`log in ${join(data, "sas-host.log")}`));
    const page = await fetch(dashboard.slice("sas host: dashboard on ".length));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");

    expect(sendOrders(app, 200, 27).sent).toBe(200);
    await expect.poll(() => finishedOrders(host), { timeout: 180_000, interval: 1_000 }).toBe(200);
    // The summary, read every 5 s when piped, says so too.
    await expect.poll(host.stdout, { timeout: 15_000, interval: 500 }).toMatch(/^orders: Processed 200$/m);
    expect(await host.stop()).toBe(0);

    const printed = [...nonEmpty(host.stdout()), ...nonEmpty(host.stderr())];
    expect(printed.length, printed.join("\n")).toBeLessThan(100);
    expect(printed.filter((line) => line.startsWith("{"))).toEqual([]);
    const logged = nonEmpty(readFileSync(join(data, "sas-host.log"), "utf8")).map(
      (line) => JSON.parse(line) as { event?: string },
    );
    expect(logged.filter((line) => line.event === "host.servicebus.message").length).toBeGreaterThanOrEqual(
      200,
    );
  }, 300_000);

  it("F27-12: with --no-summary reads no statistics of its own: the app's requests alone, as the bench counts them", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports);
    const host = await startHost(app, ports, dataFolder(), { logLevel: null, summary: false });
    hosts.push(host);
    expect(sendOrders(app, 5, 28).sent).toBe(5);
    await expect.poll(() => finishedOrders(host), { timeout: 60_000, interval: 1_000 }).toBe(5);
    // Past a piped summary's interval: it would have read the counts and printed them by now.
    await new Promise((resolve) => setTimeout(resolve, SUMMARY_INTERVAL_MS.piped + 1_000));
    expect(await host.stop()).toBe(0);
    expect(nonEmpty(host.stdout()).filter((line) => line.startsWith("orders:"))).toEqual([]);
  }, 120_000);

  it("F27-2: refuses a --log-level it does not know as a usage error, naming the levels", () => {
    const result = spawnSync(process.execPath, [...app.cli, "host", "--log-level", "loud"], {
      cwd: app.root,
      encoding: "utf8",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "sas host: --log-level loud: give debug, info, warn, error\nrun 'sas host --help' for its flags\n",
    );
  });
});
