/**
 * The dashboard's circuit breakers in a browser: the embedded host's API with a shared breaker over a
 * SQLite breaker store as the stats' breakers source, every partner operation listed, driven through
 * open, half-open and closed on the host's virtual clock; a source that fails; a host without breakers.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { SqliteBreakerStore } from "../../src/adapters/sqlite/sqlite-breaker-store.js";
import { PARTNER_OPERATIONS } from "../../src/agents/partner-agent.js";
import { SharedBreaker } from "../../src/breaker/shared-breaker.js";
import type { BreakerOutcome } from "../../src/domain/circuit-breaker.js";
import type { StatsReadings } from "../../src/operator/stats.js";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";
import { type IdlePipeline, openIdlePipeline } from "../support/idle-pipeline.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts");
const OPERATIONS = Object.values(PARTNER_OPERATIONS).flatMap((step) => [step.do, step.undo]);
const available = chromiumAvailable();
const T0 = "2026-01-01T00:00:00.000Z";

describe.runIf(available)("the dashboard's circuit breakers", () => {
  let browser: Browser;
  let idle: IdlePipeline;
  let db: ReturnType<typeof openDatabase>;
  let breaker: SharedBreaker;
  let api: HttpApi | undefined;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    idle = await openIdlePipeline();
    db = openDatabase(":memory:");
    breaker = new SharedBreaker({
      store: new SqliteBreakerStore(db),
      clock: idle.clock,
      logger: idle.logger,
      policy: {
        failureRun: 3,
        failureRate: 0.5,
        minCalls: 20,
        windowMs: 30_000,
        openMs: 5_000,
        maxOpenMs: 60_000,
        probeLeaseMs: 15_000,
      },
    });
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page?.close();
    await api?.close();
    api = undefined;
    await idle.close();
    db.close();
  });

  /** The host's API with `breakers` as its stats' breakers source (none: a host without breakers). */
  async function serve(breakers?: StatsReadings["breakers"]): Promise<void> {
    const backend = idle.pipeline.apiBackend();
    const { breakers: _, ...readings } = backend.stats;
    const stats: StatsReadings = breakers ? { ...readings, breakers } : readings;
    api = await startHttpApi({ port: 0, logger: idle.logger, backend: { ...backend, stats } });
    await page.goto(`${api.url}/`);
  }

  async function calls(operation: string, ...outcomes: BreakerOutcome[]): Promise<void> {
    for (const outcome of outcomes) {
      const decision = await breaker.admit(operation);
      if (decision.decision === "defer") throw new Error(`${operation} deferred`);
      await breaker.record(decision.ticket, outcome);
    }
  }

  const summary = () => page.locator("#breakers-summary").textContent();
  const rowOf = (operation: string) => page.locator(`#breakers tr[data-operation="${operation}"]`);
  const cells = (operation: string) => rowOf(operation).locator("td").allTextContents();
  // The page refreshes every two seconds, in real time.
  const refreshed = { timeout: 6_000 };

  it("lists every operation's breaker with its state, failures and next probe, and follows it to closed", {
    timeout: 60_000,
  }, async () => {
    await calls("reserveInventory", "succeeded", "transient", "succeeded", "transient");
    await calls("chargePayment", "transient", "transient", "transient");
    await serve(() => breaker.views(OPERATIONS));

    await expect.poll(summary).toBe("Not called now: chargePayment.");
    expect(
      await page.locator("#breakers tr").evaluateAll((rows) => rows.map((r) => r.dataset.operation)),
    ).toEqual(OPERATIONS);
    expect(await cells("chargePayment")).toEqual([
      "chargePayment",
      `Open since ${T0}`,
      "not calling",
      "2026-01-01T00:00:05.000Z",
    ]);
    expect(await cells("reserveInventory")).toEqual([
      "reserveInventory",
      "Closed",
      "2 of 4 calls, the last one failed",
      "",
    ]);
    expect(await cells("refundPayment")).toEqual(["refundPayment", "Closed", "0 of 0 calls", ""]);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-breakers.png"), fullPage: true });

    await idle.clock.advance(5_000);
    const probe = await breaker.admit("chargePayment");
    if (probe.decision !== "probe") throw new Error(`expected the probe, got ${probe.decision}`);
    await expect.poll(() => rowOf("chargePayment").getAttribute("data-status"), refreshed).toBe("half-open");
    expect(await cells("chargePayment")).toEqual([
      "chargePayment",
      `Half-open since ${T0}`,
      "not calling",
      "out now; its lease ends at 2026-01-01T00:00:20.000Z",
    ]);

    await breaker.record(probe.ticket, "succeeded");
    await expect.poll(summary, refreshed).toBe("All closed: every partner operation is called.");
    expect(await cells("chargePayment")).toEqual(["chargePayment", "Closed", "0 of 0 calls", ""]);
  });

  it("says when the host could not read them, and shows none for a host without breakers", {
    timeout: 30_000,
  }, async () => {
    await serve(() => Promise.reject(new Error("the breaker store is unreachable")));
    await expect.poll(summary).toBe("Unavailable: the host could not read it.");
    expect(await page.locator("#breakers-table").isVisible()).toBe(false);

    await api?.close();
    await serve(undefined);
    await expect.poll(() => page.locator("#counts li").count()).toBeGreaterThan(0);
    expect(await page.locator("#breakers-panel").isVisible()).toBe(false);
  });
});
