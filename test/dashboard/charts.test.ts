/**
 * The console drawn, in Chromium, over the embedded host's API on a SQLite store seeded with 100,000
 * records (seeded-host.ts): orders finished in known minutes of the last hour, a known backlog, breakers
 * taken through known calls, and three orders whose lives were scripted through the domain's
 * transitions. Each chart must carry the seeded figures; an order's address must draw its lanes and
 * bars; any state lists page by page; the page must answer within a second; and it must work behind a
 * function key, as in Azure. Pages are in UTC, so the times shown are the seeded ones. Screenshots
 * (light and dark) go to docs/images/ when missing or with UPDATE_DOCS_IMAGES=1, and the measured load
 * times to test-artifacts/dashboard-load.json.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS_BY_STEP } from "../../src/domain/partner-operations.js";
import type { ProcessState } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";
import { compensatedLife, resubmittedLife, runningLife } from "./order-lives.js";
import {
  FINISHED,
  KEY,
  keyedProxy,
  minuteStart,
  NOW,
  openSeededHost,
  PENDING,
  PROCESSING,
  type SeededHost,
} from "./seeded-host.js";

const ROOT = join(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");
const DOCS_IMAGES = join(ROOT, "docs/images");
const available = chromiumAvailable();
const RECORDS = 100_000;

describe.runIf(available)("the dashboard's charts, search and order picture on 100,000 records", () => {
  const compensated = compensatedLife("ord-life-compensated", addMilliseconds(NOW, -3 * 3_600_000));
  const lives = [
    compensated,
    resubmittedLife("ord-life-resubmitted", addMilliseconds(NOW, -4 * 3_600_000)),
    runningLife("ord-life-running", addMilliseconds(NOW, -5 * 3_600_000)),
  ];
  let host: SeededHost;
  let api: SeededHost["api"];
  let browser: Browser;
  const timings: Record<string, number[]> = {};

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    host = await openSeededHost(lives, RECORDS);
    api = host.api;
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    writeFileSync(join(ARTIFACTS, "dashboard-load.json"), `${JSON.stringify(timings, null, 2)}\n`);
  });

  /** A page opened on the dashboard, once its first reading is drawn; how long that took, in ms. */
  async function opened(url = `${api.url}/`, colorScheme: "light" | "dark" = "light") {
    const page = await browser.newPage({
      colorScheme,
      viewport: { width: 1280, height: 800 },
      timezoneId: "UTC",
    });
    const started = Date.now();
    await page.goto(url);
    await page.waitForFunction("document.documentElement.dataset.drawnAtMs !== undefined");
    return { page, ms: Date.now() - started };
  }

  async function showOrder(page: Page, orderId: string): Promise<void> {
    await page.getByLabel("Order id", { exact: true }).fill(orderId);
    await page.getByLabel("Order id", { exact: true }).press("Enter");
    await expect.poll(() => page.locator("#detail-id").textContent()).toBe(orderId);
    await expect.poll(() => page.locator("#order-svg").getAttribute("data-order-id")).toBe(orderId);
    await expect.poll(() => page.locator("#order-svg g.lane").count()).toBeGreaterThan(0);
  }

  /** The picture as drawn: per lane (by attempt), `step:outcome` of each bar; the marks' kinds. */
  async function picture(page: Page) {
    const lanes = await page
      .locator("#order-svg g.lane")
      .evaluateAll((groups) =>
        groups.map((g) => [
          Number(g.getAttribute("data-attempt")),
          [...g.querySelectorAll("g.bar")].map(
            (b) =>
              `${b.getAttribute("data-undo") === "true" ? "undo " : ""}${b.getAttribute("data-step")}:${b.getAttribute("data-outcome")}`,
          ),
        ]),
      );
    const marks = await page
      .locator("#order-svg g.mark")
      .evaluateAll((groups) => groups.map((g) => g.getAttribute("data-kind")));
    return { lanes: Object.fromEntries(lanes), marks };
  }

  it("draws each chart with the seeded figures", { timeout: 60_000 }, async () => {
    const { page } = await opened();
    try {
      // Orders finished per minute, per terminal state: every seeded minute, nothing else.
      const segments = await page
        .locator("#finished-plot rect[data-state]")
        .evaluateAll((rects) =>
          rects.map((r) => [
            r.parentElement?.getAttribute("data-minute"),
            r.getAttribute("data-state"),
            Number(r.getAttribute("data-count")),
          ]),
        );
      const expected = FINISHED.map(([before, state, count]) => [
        new Date(minuteStart(before)).toISOString(),
        state,
        count,
      ]);
      const order = (rows: unknown[][]) => [...rows].sort((a, b) => String(a).localeCompare(String(b)));
      expect(order(segments)).toEqual(order(expected));
      expect(await page.locator("#finished-plot g[data-minute]").count()).toBe(60);
      const totals = (state: ProcessState) =>
        FINISHED.filter(([, s]) => s === state).reduce((sum, [, , n]) => sum + n, 0);
      expect(await page.locator("#finished-legend li").allTextContents()).toEqual([
        `Processed ${totals("Processed")}`,
        `Error ${totals("Error")}`,
        `Compensated ${totals("Compensated")}`,
        `CompensationFailed ${totals("CompensationFailed")}`,
      ]);
      expect(await page.locator("#finished-plot svg").getAttribute("aria-label")).toBe(
        "Orders finished per minute, 11:01 to 12:00: 43 Processed, 3 Error, 3 Compensated, " +
          "1 CompensationFailed; at most 20 in a minute.",
      );
      expect(
        await page
          .locator(`#finished-plot g[data-minute="${new Date(minuteStart(1)).toISOString()}"] title`)
          .textContent(),
      ).toBe("11:59: 12 Processed, 2 Error");

      // The backlog: Pending, and the attempts in flight against MAX_IN_FLIGHT.
      const backlog = page.locator("#backlog-plot svg");
      expect(await backlog.getAttribute("data-latest-pending")).toBe(String(PENDING));
      expect(await backlog.getAttribute("data-latest-processing")).toBe(String(PROCESSING + 1));
      expect(await backlog.locator(".ceiling").getAttribute("data-value")).toBe("200");
      expect(await backlog.getAttribute("aria-label")).toBe(
        `The backlog: now Pending ${PENDING}, Processing ${PROCESSING + 1} (MAX_IN_FLIGHT 200).`,
      );

      // Each partner operation: its breaker's state and its calls, as the breaker store has them.
      const views = await host.pipeline.breaker.views(OPERATIONS_BY_STEP);
      const drawn = await page.locator("#partner-plot g.operation").evaluateAll((groups) =>
        groups.map((g) => ({
          operation: g.getAttribute("data-operation"),
          status: g.getAttribute("data-status"),
          calls: Number(g.getAttribute("data-calls")),
          failed: Number(g.getAttribute("data-failed")),
        })),
      );
      expect(drawn).toEqual(
        views.map((v) => ({
          operation: v.operation,
          status: v.status,
          calls: v.windowCalls,
          failed: v.windowFailures,
        })),
      );
      expect(drawn.find((d) => d.operation === "reserveInventory")).toEqual({
        operation: "reserveInventory",
        status: "closed",
        calls: 4,
        failed: 1,
      });
      expect(drawn.find((d) => d.operation === "chargePayment")?.status).toBe("open");
      // An open breaker makes no calls: its row says when the next probe is due, not "0 of 0 failed".
      expect(
        await page.locator('#partner-plot g[data-operation="chargePayment"] text.count').textContent(),
      ).toBe("not calling · next probe 12:00:35");
      expect(
        await page.locator('#partner-plot g[data-operation="reserveInventory"] > title').textContent(),
      ).toBe("reserveInventory: breaker closed; 3 answered and 1 failed in its window");
      expect(await page.locator("#counts li[data-state=Pending] b").textContent()).toBe(String(PENDING));
    } finally {
      await page.close();
    }
  });

  it("finds an order by id and draws its attempts as lanes, its steps as bars, beside its compensation log", {
    timeout: 60_000,
  }, async () => {
    const { page } = await opened();
    try {
      await page.getByLabel("Order id", { exact: true }).fill("ord-nobody");
      await page.getByRole("button", { name: "Show the order" }).click();
      await expect.poll(() => page.locator("#detail-missing").textContent()).toBe("No order ord-nobody.");

      for (const life of lives) {
        await showOrder(page, life.record.orderId);
        expect(await picture(page)).toEqual({ lanes: life.picture.lanes, marks: life.picture.marks });
      }

      await showOrder(page, compensated.record.orderId);
      const bars = page.locator("#order-svg g.bar");
      expect(await bars.count()).toBe(5);
      expect(await bars.first().locator("title").textContent()).toBe(
        "reserveInventory · attempt 1 · completed, 1.100 s: 09:00:30.100 to 09:00:31.200 " +
          "(UTC 2026-03-02T09:00:30.100Z to 2026-03-02T09:00:31.200Z)",
      );
      expect(await page.locator("#order-svg g.bar[data-undo=true] title").first().textContent()).toContain(
        "undo of chargePayment · attempt 3 · undone",
      );
      expect(await page.locator("#order-svg g.mark title").allTextContents()).toEqual([
        expect.stringMatching(
          /^Supervisor recovery at 09:01:10\.000 \(UTC .*\): Processing → Pending, AttemptExpired$/,
        ),
        expect.stringMatching(/^Supervisor recovery at .*: Processing → Error, RecoveriesExhausted$/),
        expect.stringMatching(/^Operator compensate at .*: Error → Compensating, CompensationRequested$/),
      ]);
      expect(await page.locator("#compensation-log li").allTextContents()).toEqual([
        "reserveInventory: Compensated, logged 2026-03-02 09:00:31.200",
        "chargePayment: Compensated, logged 2026-03-02 09:01:10.000",
      ]);
      // The text history stays, for copying.
      expect(await page.locator("#timeline tr").count()).toBe(compensated.record.history.length);

      // The bars and marks take the keyboard's focus one after another.
      await page.locator("#order-svg g.bar").first().focus();
      await page.keyboard.press("Tab");
      expect(await page.evaluate('document.activeElement.getAttribute("data-step")')).toBe("chargePayment");
    } finally {
      await page.close();
    }
  });

  it("lists any state page by page, forward and back", { timeout: 60_000 }, async () => {
    const { page } = await opened(`${api.url}/#/orders`);
    try {
      await page
        .getByRole("navigation", { name: "Filter by state" })
        .getByRole("link", { name: /^Error/ })
        .click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 1: 25 order(s) in Error.");
      const first = await page
        .locator("#browse tr")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-order-id")));
      const answer = (await (await fetch(`${api.url}/api/orders?state=Error&limit=25`)).json()) as {
        items: { orderId: string }[];
      };
      expect(first).toEqual(answer.items.map((r) => r.orderId));
      await page.getByRole("button", { name: "Next page" }).click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 2: 25 order(s) in Error.");
      const second = await page
        .locator("#browse tr")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-order-id")));
      expect(second.some((id) => first.includes(id))).toBe(false);
      await page.getByRole("button", { name: "Previous page" }).click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 1: 25 order(s) in Error.");
      expect(await page.locator("#browse tr").first().getAttribute("data-order-id")).toBe(first[0]);
      expect(await page.locator("#browse tr").first().locator("td").nth(1).textContent()).toBe("Error");

      await page.getByLabel("Per page").selectOption("50");
      expect(await page.evaluate("location.hash")).toBe("#/orders?state=Error&limit=50");
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 1: 50 order(s) in Error.");
      await page.getByRole("link", { name: /^Compensating/ }).click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 1: 5 order(s) in Compensating, the last page.");
      expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    } finally {
      await page.close();
    }
  });

  it("answers within a second on 100,000 records: the page drawn, and an order found and drawn", {
    timeout: 60_000,
  }, async () => {
    const counts = (await (await fetch(`${api.url}/api/stats`)).json()) as { counts: Record<string, number> };
    expect(Object.values(counts.counts).reduce((a, b) => a + b, 0)).toBe(RECORDS);
    // Three loads, each in a fresh browser context: the best of them is what the page costs, the others
    // also what the machine was doing meanwhile (the whole suite runs its files in parallel).
    const loads: number[] = [];
    const drawnAt: number[] = [];
    const searches: number[] = [];
    for (let run = 0; run < 3; run++) {
      const { page, ms } = await opened();
      try {
        loads.push(ms);
        drawnAt.push(Number(await page.evaluate("document.documentElement.dataset.drawnAtMs")));
        const started = Date.now();
        await showOrder(page, compensated.record.orderId);
        expect(await page.locator("#order-svg g.bar").count()).toBe(5);
        searches.push(Date.now() - started);
      } finally {
        await page.close();
      }
    }
    timings["page load until drawn, navigation to first reading drawn (ms)"] = loads;
    timings["the same, by the browser's clock since navigation (ms)"] = drawnAt;
    timings["search by id until the order's picture is drawn (ms)"] = searches;
    expect(Math.min(...loads)).toBeLessThan(1_000);
    expect(Math.min(...searches)).toBeLessThan(1_000);
  });

  it("works behind a function key, as in Azure: every request of the page carries it", {
    timeout: 60_000,
  }, async () => {
    const refused: string[] = [];
    const proxy = await keyedProxy(api.url, refused);
    try {
      const { address, port } = proxy.address() as AddressInfo;
      const { page } = await opened(`http://${address}:${port}/api/dashboard?code=${KEY}`);
      try {
        expect(await page.locator("#finished-plot g[data-minute]").count()).toBe(60);
        await showOrder(page, compensated.record.orderId);
        expect(await page.locator("#order-svg g.bar").count()).toBe(5);
        expect(refused).toEqual([]);
      } finally {
        await page.close();
      }
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  /**
   * The store moves on while the pages watch, the host's clock ten seconds at a time: Pending orders
   * are claimed and others finish, so the backlog's lines have points to join. Last: it changes the store.
   */
  async function moveOn(pages: readonly Page[], rounds: number): Promise<void> {
    const { db, clock, pipeline } = host;
    const claim = db.prepare(
      `UPDATE state_records SET process_state = 'Processing', locked_by = order_id || ':1', complete_by = ?, updated_at = ?,
         document = json_set(document, '$.processState', 'Processing', '$.lockedBy', order_id || ':1',
           '$.completeBy', ?, '$.attempt', 1, '$.updatedAt', ?)
       WHERE order_id IN (SELECT order_id FROM state_records WHERE process_state = 'Pending' ORDER BY order_id LIMIT ?)`,
    );
    const finish = db.prepare(
      `UPDATE state_records SET process_state = 'Processed', locked_by = NULL, complete_by = NULL, updated_at = ?,
         document = json_set(document, '$.processState', 'Processed', '$.lockedBy', NULL, '$.completeBy', NULL, '$.updatedAt', ?)
       WHERE order_id IN (SELECT order_id FROM state_records WHERE process_state = 'Processing' ORDER BY order_id LIMIT ?)`,
    );
    for (let round = 1; round <= rounds; round++) {
      await clock.advance(10_000);
      const now = clock.now().toISOString();
      const deadline = addMilliseconds(now, 60_000);
      finish.run(now, now, 10 + 5 * round);
      claim.run(deadline, now, deadline, now, 30 + 10 * (round % 3));
      const pending = String(await pipeline.states.countInState("Pending"));
      for (const page of pages) {
        await expect
          .poll(() => page.locator("#backlog-plot svg").getAttribute("data-latest-pending"), {
            timeout: 10_000,
          })
          .toBe(pending);
      }
    }
  }

  it("follows light and dark, with the charts and an order's picture (the docs' screenshots)", {
    timeout: 90_000,
  }, async () => {
    const pages = await Promise.all(
      (["light", "dark"] as const).map((scheme) => opened(`${api.url}/`, scheme)),
    );
    try {
      await moveOn(
        pages.map((p) => p.page),
        6,
      );
      for (const [i, scheme] of (["light", "dark"] as const).entries()) {
        const page = pages[i]?.page;
        if (!page) throw new Error(`no ${scheme} page`);
        expect(await page.locator("#backlog-plot polyline").first().getAttribute("points")).toMatch(
          /^(\S+ ){6}\S+$/,
        );
        const overview = join(ARTIFACTS, `dashboard-overview-${scheme}.png`);
        await page.screenshot({ path: overview });
        await showOrder(page, compensated.record.orderId);
        const background = await page.evaluate("getComputedStyle(document.body).backgroundColor");
        expect(background).toBe(scheme === "dark" ? "rgb(22, 22, 22)" : "rgb(255, 255, 255)");
        const fill = await page.evaluate(
          "getComputedStyle(document.querySelector('#order-svg g.bar[data-outcome=completed] rect')).fill",
        );
        expect(fill).toBe(scheme === "dark" ? "rgb(60, 199, 155)" : "rgb(0, 122, 90)");
        await page.screenshot({ path: join(ARTIFACTS, `dashboard-order-${scheme}.png`), fullPage: true });
        if (
          !existsSync(join(DOCS_IMAGES, `dashboard-${scheme}.png`)) ||
          process.env.UPDATE_DOCS_IMAGES === "1"
        ) {
          copyFileSync(overview, join(DOCS_IMAGES, `dashboard-${scheme}.png`));
          // The order's view down to its picture and compensation log; its history table is left out.
          await page.evaluate("window.scrollTo(0, 0)");
          const life = await page.locator("#view-order .life").boundingBox();
          if (!life) throw new Error("the order's view is not drawn");
          await page.screenshot({
            path: join(DOCS_IMAGES, `dashboard-order-${scheme}.png`),
            fullPage: true,
            clip: { x: 0, y: 0, width: 1280, height: life.y + life.height + 8 },
          });
        }
      }
    } finally {
      for (const { page } of pages) await page.close();
    }
  });
});
