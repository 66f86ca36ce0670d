/**
 * The dashboard drawn, in Chromium, over the embedded host's API on a SQLite store seeded with 100,000
 * records: orders finished in known minutes of the last hour, a known backlog, breakers taken through
 * known calls, and three orders whose lives were scripted through the domain's transitions. Each chart
 * must carry the seeded figures; search must find an order by id and draw its lanes and bars; any
 * state lists page by page; the page must answer within a second; and it must work behind a function
 * key, as in Azure. Screenshots (light and dark) go to docs/images/ when missing or with
 * UPDATE_DOCS_IMAGES=1, and the measured load times to test-artifacts/dashboard-load.json.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import { LocalPipeline } from "../../laptop/embedded/pipeline.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { PARTNER_OPERATION_NAMES } from "../../src/agents/partner-agent.js";
import { loadPipelineSettings } from "../../src/config/settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { BreakerOutcome } from "../../src/domain/circuit-breaker.js";
import type { ProcessState, StateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";
import { pendingRecord } from "../support/records.js";
import { compensatedLife, type OrderLife, resubmittedLife, runningLife } from "./order-lives.js";

const ROOT = join(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");
const DOCS_IMAGES = join(ROOT, "docs/images");
const available = chromiumAvailable();

/** The host's clock: half a minute into 12:00, so the hour's chart runs from 11:01 to 12:00. */
const NOW = "2026-03-02T12:00:30.000Z";
const RECORDS = 100_000;
const MINUTE = 60_000;
/** Orders finished in the last hour: [minutes before the current one, terminal state, how many]. */
const FINISHED: readonly (readonly [number, ProcessState, number])[] = [
  [0, "Processed", 7],
  [1, "Processed", 12],
  [1, "Error", 2],
  [5, "Compensated", 3],
  [17, "CompensationFailed", 1],
  [30, "Processed", 20],
  [59, "Processed", 4],
  [59, "Error", 1],
];
/** The backlog, and the older records that fill the store up to RECORDS. */
const PENDING = 1_234;
const PROCESSING = 37;
const OLD: readonly (readonly [ProcessState, number])[] = [
  ["Error", 800],
  ["CompensationFailed", 50],
  ["Compensating", 5],
  ["Compensated", 2_000],
];
const KEY = "function-key-of-the-test";

const minuteStart = (minutesBefore: number) => {
  const now = Date.parse(NOW);
  return now - (now % MINUTE) - minutesBefore * MINUTE;
};

/** Every record as a row, inserted in one transaction, as the store writes them. */
function insertAll(db: EmbeddedDatabase, records: Iterable<StateRecord>): void {
  const insert = db.prepare(
    `INSERT INTO state_records (order_id, etag, process_state, locked_by, complete_by, not_before, updated_at, progress_at, document)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    let n = 0;
    for (const r of records) {
      insert.run(
        r.orderId,
        `"e${n++}"`,
        r.processState,
        r.lockedBy,
        r.completeBy,
        r.notBefore,
        r.updatedAt,
        r.progressAt,
        JSON.stringify(r),
      );
    }
  })();
}

/** The seeded records: the lives, the hour's finished orders, the backlog, and older ones up to RECORDS. */
function* seededRecords(lives: readonly OrderLife[]): Generator<StateRecord> {
  for (const life of lives) yield life.record;
  let n = lives.length;
  const record = (processState: ProcessState, updatedAt: string, overrides: Partial<StateRecord> = {}) =>
    pendingRecord(`ord-${String(n++).padStart(6, "0")}`, {
      processState,
      updatedAt,
      createdAt: updatedAt,
      ...overrides,
    });
  for (const [before, state, count] of FINISHED) {
    for (let i = 0; i < count; i++)
      yield record(state, new Date(minuteStart(before) + 1_000 + i * 100).toISOString());
  }
  const old = (i: number) => addMilliseconds(NOW, -2 * 3_600_000 - i * 20_000);
  for (let i = 0; i < PENDING; i++) yield record("Pending", old(i), { notBefore: old(i) });
  for (let i = 0; i < PROCESSING; i++) {
    yield record("Processing", old(i), {
      lockedBy: `ord-p${i}:1`,
      attempt: 1,
      completeBy: addMilliseconds(NOW, 60_000),
    });
  }
  for (const [state, count] of OLD) for (let i = 0; i < count; i++) yield record(state, old(i));
  while (n < RECORDS) yield record("Processed", old(n));
}

describe.runIf(available)("the dashboard's charts, search and order picture on 100,000 records", () => {
  const compensated = compensatedLife("ord-life-compensated", addMilliseconds(NOW, -3 * 3_600_000));
  const lives = [
    compensated,
    resubmittedLife("ord-life-resubmitted", addMilliseconds(NOW, -4 * 3_600_000)),
    runningLife("ord-life-running", addMilliseconds(NOW, -5 * 3_600_000)),
  ];
  const folder = mkdtempSync(join(tmpdir(), "dashboard-"));
  let db: EmbeddedDatabase;
  let pipeline: LocalPipeline;
  let api: HttpApi;
  let browser: Browser;
  let clock: VirtualClock;
  const timings: Record<string, number[]> = {};

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    db = openDatabase(join(folder, "sas.sqlite"));
    clock = new VirtualClock(NOW);
    pipeline = await LocalPipeline.open({
      db,
      clock,
      random: seededRandom(1),
      logger: new MemoryLogger("warn"),
      settings: loadPipelineSettings({}),
      partnerUrl: "http://127.0.0.1:9",
      starterIntervalMs: 1_000,
      supervisorIntervalMs: 5_000,
    });
    insertAll(db, seededRecords(lives));
    db.exec("ANALYZE");
    await calls("reserveInventory", "succeeded", "succeeded", "succeeded", "transient");
    await calls("chargePayment", ...new Array<BreakerOutcome>(5).fill("transient"));
    api = await startHttpApi({ port: 0, logger: new MemoryLogger("warn"), backend: pipeline.apiBackend() });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await pipeline?.stop();
    db?.close();
    rmSync(folder, { recursive: true, force: true });
    writeFileSync(join(ARTIFACTS, "dashboard-load.json"), `${JSON.stringify(timings, null, 2)}\n`);
  });

  async function calls(operation: string, ...outcomes: BreakerOutcome[]): Promise<void> {
    for (const outcome of outcomes) {
      const decision = await pipeline.breaker.admit(operation);
      if (decision.decision === "defer") throw new Error(`${operation} deferred`);
      await pipeline.breaker.record(decision.ticket, outcome);
    }
  }

  /** A page opened on the dashboard, once its first reading is drawn; how long that took, in ms. */
  async function opened(url = `${api.url}/`, colorScheme: "light" | "dark" = "light") {
    const page = await browser.newPage({ colorScheme, viewport: { width: 1280, height: 900 } });
    const started = Date.now();
    await page.goto(url);
    await page.waitForFunction("document.documentElement.dataset.drawnAtMs !== undefined");
    return { page, ms: Date.now() - started };
  }

  async function showOrder(page: Page, orderId: string): Promise<void> {
    await page.getByLabel("Order id", { exact: true }).fill(orderId);
    await page.getByLabel("Order id", { exact: true }).press("Enter");
    await expect.poll(() => page.locator("#detail-id").textContent()).toBe(orderId);
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
        "Orders finished per minute, 11:01 to 12:00 UTC: 43 Processed, 3 Error, 3 Compensated, " +
          "1 CompensationFailed; at most 20 in a minute.",
      );
      expect(
        await page
          .locator(`#finished-plot g[data-minute="${new Date(minuteStart(1)).toISOString()}"] title`)
          .textContent(),
      ).toBe("11:59: 12 Processed, 2 Error");

      // The backlog: Pending, and the attempts in flight against MAX_IN_FLIGHT.
      const pending = page.locator("#pending-plot svg");
      expect(await pending.getAttribute("data-latest-pending")).toBe(String(PENDING));
      const inFlight = page.locator("#in-flight-plot svg");
      expect(await inFlight.getAttribute("data-latest-processing")).toBe(String(PROCESSING + 1));
      expect(await inFlight.locator(".ceiling").getAttribute("data-value")).toBe("200");
      expect(await inFlight.getAttribute("aria-label")).toBe(
        `Attempts in flight: now Processing ${PROCESSING + 1} (MAX_IN_FLIGHT 200).`,
      );

      // Each partner operation: its breaker's state and its calls, as the breaker store has them.
      const views = await pipeline.breaker.views(PARTNER_OPERATION_NAMES);
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
      await expect.poll(() => page.locator("#search-result").textContent()).toBe("No order ord-nobody.");

      for (const life of lives) {
        await showOrder(page, life.record.orderId);
        expect(await picture(page)).toEqual({ lanes: life.picture.lanes, marks: life.picture.marks });
      }

      await showOrder(page, compensated.record.orderId);
      const bars = page.locator("#order-svg g.bar");
      expect(await bars.count()).toBe(5);
      expect(await bars.first().locator("title").textContent()).toMatch(
        /^reserveInventory · attempt 1 · completed \(2026-03-02T09:00:30\.100Z to 2026-03-02T09:00:31\.200Z, 1\.100 s\)$/,
      );
      expect(await page.locator("#order-svg g.bar[data-undo=true] title").first().textContent()).toContain(
        "undo of chargePayment · attempt 3 · undone",
      );
      expect(await page.locator("#order-svg g.mark title").allTextContents()).toEqual([
        expect.stringMatching(/^Supervisor recovery at .*: Processing → Pending, AttemptExpired$/),
        expect.stringMatching(/^Supervisor recovery at .*: Processing → Error, RecoveriesExhausted$/),
        expect.stringMatching(/^Operator compensate at .*: Error → Compensating, CompensationRequested$/),
      ]);
      expect(await page.locator("#compensation-log li").allTextContents()).toEqual([
        "reserveInventory, logged 2026-03-02T09:00:31.200Z: Compensated",
        "chargePayment, logged 2026-03-02T09:01:10.000Z: Compensated",
      ]);
      // The text history stays, for copying.
      expect(await page.locator("#timeline li").count()).toBe(compensated.record.history.length);

      // The bars and marks take the keyboard's focus one after another.
      await page.locator("#order-svg g.bar").first().focus();
      await page.keyboard.press("Tab");
      expect(await page.evaluate('document.activeElement.getAttribute("data-step")')).toBe("chargePayment");
    } finally {
      await page.close();
    }
  });

  it("lists any state page by page, forward and back", { timeout: 60_000 }, async () => {
    const { page } = await opened();
    try {
      await page.getByLabel("State", { exact: true }).selectOption("Error");
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

      await page.getByLabel("State", { exact: true }).selectOption("Compensating");
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
          .poll(() => page.locator("#pending-plot svg").getAttribute("data-latest-pending"), {
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
        expect(await page.locator("#pending-plot polyline").getAttribute("points")).toMatch(/^(\S+ ){6}\S+$/);
        await showOrder(page, compensated.record.orderId);
        const background = await page.evaluate("getComputedStyle(document.body).backgroundColor");
        expect(background).toBe(scheme === "dark" ? "rgb(22, 22, 22)" : "rgb(255, 255, 255)");
        const fill = await page.evaluate(
          "getComputedStyle(document.querySelector('#order-svg g.bar[data-outcome=completed] rect')).fill",
        );
        expect(fill).toBe(scheme === "dark" ? "rgb(60, 199, 155)" : "rgb(0, 122, 90)");
        await page.screenshot({ path: join(ARTIFACTS, `dashboard-charts-${scheme}.png`), fullPage: true });
        if (
          !existsSync(join(DOCS_IMAGES, `dashboard-${scheme}.png`)) ||
          process.env.UPDATE_DOCS_IMAGES === "1"
        ) {
          await page.locator("#over-time").screenshot({ path: join(DOCS_IMAGES, `dashboard-${scheme}.png`) });
          await page
            .locator("#detail")
            .screenshot({ path: join(DOCS_IMAGES, `dashboard-order-${scheme}.png`) });
        }
      }
    } finally {
      for (const { page } of pages) await page.close();
    }
  });
});

/** A proxy that, like the Functions host, refuses every request without the key (query `code` or header). */
async function keyedProxy(target: string, refused: string[]): Promise<Server> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    // The browser asks for an icon of its own accord; the host's answer to that does not matter.
    if (url.pathname === "/favicon.ico") {
      res.writeHead(404).end();
      return;
    }
    if (url.searchParams.get("code") !== KEY && req.headers["x-functions-key"] !== KEY) {
      refused.push(url.pathname);
      res.writeHead(401).end();
      return;
    }
    const forwarded = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}
