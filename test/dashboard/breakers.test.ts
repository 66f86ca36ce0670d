/**
 * The console's circuit breakers in a browser (the Partner view, `#/partner`): the embedded host's API
 * with a shared breaker over a SQLite breaker store as the stats' breakers source, every partner
 * operation listed, driven through open, half-open and closed on the host's virtual clock, each saying
 * why it is in its state and when its next probe is due; a source that fails; a host without breakers.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import { SqliteBreakerStore } from "../../laptop/sqlite/sqlite-breaker-store.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { SharedBreaker } from "../../src/breaker/shared-breaker.js";
import type { BreakerOpening, BreakerOutcome } from "../../src/domain/circuit-breaker.js";
import { OPERATIONS_BY_STEP } from "../../src/domain/partner-operations.js";
import type { StatsReadings } from "../../src/operator/stats.js";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";
import { type IdlePipeline, openIdlePipeline } from "../support/idle-pipeline.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts");
const OPERATIONS = OPERATIONS_BY_STEP;
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
    // In UTC, so the times shown are the breaker store's; the day is not today's, so they are dated.
    page = await browser.newPage({ timezoneId: "UTC" });
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
    await page.goto(`${api.url}/#/partner`);
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

  it("F27-6: lists every operation's breaker, why it is in its state and when it is probed, and follows it to closed", {
    timeout: 60_000,
  }, async () => {
    await calls("reserveInventory", "succeeded", "transient", "succeeded", "transient");
    await calls("chargePayment", "transient", "transient", "transient");
    await serve(() => breaker.views(OPERATIONS));

    await expect.poll(summary).toBe("Not called now: chargePayment.");
    expect(
      await page.locator("#breakers tr").evaluateAll((rows) => rows.map((r) => r.dataset.operation)),
    ).toEqual(OPERATIONS);
    const opened = await cells("chargePayment");
    expect(opened.slice(0, 3)).toEqual([
      "chargePayment",
      "Open since 2026-01-01 00:00:00",
      "Opened at 2026-01-01 00:00:00: 3 transient failures in a row.",
    ]);
    // Counted down on the host's clock, which stands still here while this browser's runs on.
    expect(opened[3]).toMatch(/^(In [1-5]s|Due now) \(2026-01-01 00:00:05\)\.$/);
    expect(await rowOf("chargePayment").locator("time").first().getAttribute("title")).toBe(
      "2026-01-01T00:00:00.000Z UTC",
    );
    expect(await cells("reserveInventory")).toEqual([
      "reserveInventory",
      "Closed",
      "2 of 4 calls in the window failed; the last call failed.",
      "",
    ]);
    expect(await cells("refundPayment")).toEqual(["refundPayment", "Closed", "No calls in the window.", ""]);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-breakers.png"), fullPage: true });

    await idle.clock.advance(5_000);
    const probe = await breaker.admit("chargePayment");
    if (probe.decision !== "probe") throw new Error(`expected the probe, got ${probe.decision}`);
    await expect.poll(() => rowOf("chargePayment").getAttribute("data-status"), refreshed).toBe("half-open");
    const probing = await cells("chargePayment");
    expect(probing.slice(0, 3)).toEqual([
      "chargePayment",
      "Half-open since 2026-01-01 00:00:05",
      "Opened at 2026-01-01 00:00:00: 3 transient failures in a row. A probe went out at 2026-01-01 00:00:05.",
    ]);
    expect(probing[3]).toMatch(/^One probe is out; its lease ends (in \d+s|now) \(2026-01-01 00:00:20\)\.$/);

    // The probe fails: open again, for twice as long, since the probe's failure.
    await breaker.record(probe.ticket, "transient");
    await expect.poll(() => rowOf("chargePayment").getAttribute("data-status"), refreshed).toBe("open");
    const reopened = await cells("chargePayment");
    expect(reopened.slice(1, 3)).toEqual([
      "Open since 2026-01-01 00:00:05",
      "Opened at 2026-01-01 00:00:00: 3 transient failures in a row. A probe failed at 2026-01-01 00:00:05; " +
        "open again since.",
    ]);
    expect(reopened[3]).toMatch(/\(2026-01-01 00:00:15\)\.$/);

    await idle.clock.advance(10_000);
    const second = await breaker.admit("chargePayment");
    if (second.decision !== "probe") throw new Error(`expected the probe, got ${second.decision}`);
    await breaker.record(second.ticket, "succeeded");
    await expect.poll(summary, refreshed).toBe("All closed: every partner operation is called.");
    expect(await cells("chargePayment")).toEqual(["chargePayment", "Closed", "No calls in the window.", ""]);
  });

  it("F27-6: says which failures opened a breaker when the host reports them", {
    timeout: 30_000,
  }, async () => {
    const view = (operation: string, opening: BreakerOpening) => ({
      operation,
      status: "open" as const,
      since: T0,
      openedAt: T0,
      nextProbeAt: "2026-01-01T00:00:05.000Z",
      consecutiveFailures: 0,
      windowCalls: 0,
      windowFailures: 0,
      opening,
    });
    await serve(async () => [
      view("reserveInventory", {
        cause: "run",
        consecutiveFailures: 3,
        windowCalls: 7,
        windowFailures: 4,
        windowMs: 30_000,
      }),
      view("chargePayment", {
        cause: "rate",
        consecutiveFailures: 1,
        windowCalls: 20,
        windowFailures: 11,
        windowMs: 30_000,
      }),
    ]);
    await expect.poll(() => rowOf("chargePayment").count()).toBe(1);
    expect((await cells("reserveInventory"))[2]).toBe(
      "Opened at 2026-01-01 00:00:00: 3 transient failures in a row.",
    );
    expect((await cells("chargePayment"))[2]).toBe(
      "Opened at 2026-01-01 00:00:00: 11 of 20 calls failed transiently in 30 s.",
    );
  });

  it("says when the host could not read them, and shows none for a host without breakers", {
    timeout: 30_000,
  }, async () => {
    await serve(() => Promise.reject(new Error("the breaker store is unreachable")));
    await expect.poll(summary).toBe("Unavailable: the host could not read it.");
    expect(await page.locator("#breakers-table").isVisible()).toBe(false);

    await api?.close();
    await serve(undefined);
    await expect.poll(() => page.locator("#inflight").textContent()).toMatch(/^In flight: \d+ of \d+$/);
    expect(await page.locator("#breakers-panel").isVisible()).toBe(false);
    await page.getByRole("link", { name: "Overview" }).click();
    await expect.poll(() => page.locator("#counts li").count()).toBeGreaterThan(0);
    expect(await page.locator("#overview-breakers").isVisible()).toBe(false);
  });
});
