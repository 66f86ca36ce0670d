/**
 * The console's Partner view (`#/partner`) in a browser, over the embedded host's operator API and its simulated
 * partner on real time: the fault rates set, the partner taken down and brought back from the page (with
 * the API token, by keyboard), what the partner then reports, and an order held by the outage; a host
 * whose partner has no controls; the page in dark mode.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoOrder } from "../../laptop/embedded/demo.js";
import { type EmbeddedStack, startEmbeddedStack } from "../../laptop/embedded/embedded-stack.js";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import { localKeys } from "../../laptop/embedded/key-file.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { seededRandom } from "../../src/domain/backoff.js";
import { isTerminal, type ProcessState } from "../../src/domain/state-record.js";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts");
const API_TOKEN = "partner-panel-api-token";
const available = chromiumAvailable();

/** An instant as the page shows it in UTC: the time, dated when it is not today's. */
function shown(iso: string | undefined): string {
  const at = new Date(iso ?? "");
  const time = at.toISOString().slice(11, 19);
  return at.toISOString().slice(0, 10) === new Date().toISOString().slice(0, 10)
    ? time
    : `${at.toISOString().slice(0, 10)} ${time}`;
}

interface ControlState {
  readonly faults: Record<string, number>;
  readonly outage: { readonly since: string; readonly until: string } | null;
  readonly changes: readonly { change: string; by: string; faults?: object; until?: string }[];
}

describe.runIf(available)("the dashboard's Partner panel", () => {
  const db = openDatabase(":memory:");
  const logger = new MemoryLogger("warn");
  let browser: Browser;
  let stack: EmbeddedStack;
  let api: HttpApi;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium();
    stack = await startEmbeddedStack({
      db,
      logger,
      faults: { transient: 0, permanent: 0, slow: 0, lostReply: 0 },
      duplicateReplies: 0,
      seed: 3,
      agent: "activity",
      env: {},
      keyRing: localKeys({}, ":memory:", new Date()).ring,
    });
    api = await startHttpApi({
      port: 0,
      logger,
      backend: stack.pipeline.apiBackend(),
      partner: stack.partnerControls,
      apiToken: API_TOKEN,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await stack?.stop();
    db.close();
  });

  async function partnerState(): Promise<ControlState> {
    const response = await fetch(`${api.url}/api/partner`);
    expect(response.status).toBe(200);
    return (await response.json()) as ControlState;
  }

  async function processState(orderId: string): Promise<ProcessState | undefined> {
    return (await stack.pipeline.states.get(orderId))?.processState;
  }

  const byOperator = (state: ControlState) => state.changes.filter((change) => change.by === "operator");

  it("sets the rates with the API token, shows a refusal's reason, takes the partner down and brings it back", {
    timeout: 90_000,
  }, async () => {
    const page = await browser.newPage({ timezoneId: "UTC" });
    const panel = page.locator("#partner");
    try {
      await page.goto(`${api.url}/#/partner`);
      await expect
        .poll(() => page.locator("#partner-status").textContent())
        .toMatch(/^Up: calls are answered/);
      expect(await page.locator("#partner-rate-transient").textContent()).toBe("0");
      expect(await panel.getByLabel("Transient", { exact: true }).inputValue()).toBe("0");

      // Without the token the host refuses the change, and the panel says why.
      await panel.getByLabel("Transient", { exact: true }).fill("0.25");
      await panel.getByRole("button", { name: "Set the fault rates" }).click();
      await expect
        .poll(() => page.locator("#partner-error").textContent())
        .toBe("Refused: 401 unauthorized: operator commands need Authorization: Bearer <api token>");
      expect((await partnerState()).faults.transient).toBe(0);
      // The operator's edit survives the next refresh while it is refused.
      await page.waitForResponse(
        (response) => response.url() === `${api.url}/api/partner` && response.request().method() === "GET",
      );
      expect(await panel.getByLabel("Transient", { exact: true }).inputValue()).toBe("0.25");

      await panel.getByLabel("Admin key or API token, if the host needs one").fill(API_TOKEN);
      await panel.getByRole("button", { name: "Set the fault rates" }).click();
      await expect.poll(async () => (await partnerState()).faults.transient).toBe(0.25);
      expect(byOperator(await partnerState())).toEqual([
        expect.objectContaining({
          change: "faults",
          faults: { transient: 0.25, permanent: 0, slow: 0, lostReply: 0 },
        }),
      ]);
      expect(await page.locator("#partner-error").textContent()).toBe("");
      expect(await page.locator("#partner-rate-transient").textContent()).toBe("0.25");
      const newest = page.locator("#partner-changes tr").first();
      expect(await newest.getAttribute("data-change")).toBe("faults");
      expect(await newest.textContent()).toContain(
        "Fault rates setoperatortransient 0.25, permanent 0, slow 0, lost reply 0",
      );

      await takeDownAndBringBack(page);
    } finally {
      await page.close();
    }
  });

  /** By keyboard: the seconds typed and Enter, then "Bring it back now" focused and Enter. */
  async function takeDownAndBringBack(page: Page): Promise<void> {
    const panel = page.locator("#partner");
    const seconds = panel.getByLabel("Seconds down");
    await seconds.fill("30");
    expect(await panel.getByRole("button", { name: "Take the partner down for 30 seconds" }).count()).toBe(1);
    await seconds.press("Enter");
    await expect.poll(async () => (await partnerState()).outage).not.toBeNull();
    const { outage } = await partnerState();
    expect(Date.parse(outage?.until ?? "") - Date.parse(outage?.since ?? "")).toBe(30_000);
    await expect
      .poll(() => page.locator("#partner-status").textContent())
      .toBe(`Down since ${shown(outage?.since)}: every call is refused until ${shown(outage?.until)}.`);
    await expect
      .poll(() => page.locator("#partner-countdown").textContent())
      .toMatch(/^Back in (2\d|30)s\.$/);

    // An order submitted meanwhile is refused by the partner and does not finish.
    const order = demoOrder("ord-outage", 1, seededRandom(4));
    const submitted = await fetch(`${api.url}/api/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(order),
    });
    expect(submitted.status).toBe(202);
    await expect
      .poll(async () => (await stack.partner?.ledger())?.outageRefusals, { timeout: 10_000 })
      .toBeGreaterThan(0);
    expect(isTerminal((await processState(order.orderId)) ?? "Pending")).toBe(false);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-partner-down.png"), fullPage: true });

    await page.locator("#partner").getByRole("button", { name: "Bring it back now" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#partner-status").textContent()).toMatch(/^Up: calls are answered/);
    expect(await page.locator("#partner-countdown").isHidden()).toBe(true);
    const back = await partnerState();
    expect(back.outage).toBeNull();
    expect(byOperator(back).map((change) => change.change)).toEqual(["faults", "outage", "recovered"]);
    expect(byOperator(back)[1]?.until).toBe(outage?.until);

    // The partner answers again: the order held by the outage reaches a final state.
    await expect
      .poll(async () => isTerminal((await processState(order.orderId)) ?? "Pending"), { timeout: 60_000 })
      .toBe(true);
    await expect
      .poll(() =>
        page
          .locator("#partner-changes tr")
          .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-change"))),
      )
      .toEqual(expect.arrayContaining(["recovered", "outage", "faults"]));
    const rows = await page
      .locator("#partner-changes tr")
      .evaluateAll((list) => list.map((row) => row.getAttribute("data-change")));
    expect(rows.slice(0, 3)).toEqual(["recovered", "outage", "faults"]);
    expect(await page.locator("#partner-changes tr").nth(1).textContent()).toContain(
      `until ${shown(outage?.until)}`,
    );
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-partner-back.png"), fullPage: true });
  }

  it("says so when the host's partner has no controls, and the rest of the page still works", {
    timeout: 30_000,
  }, async () => {
    const withoutControls = await startHttpApi({ port: 0, logger, backend: stack.pipeline.apiBackend() });
    const page = await browser.newPage();
    try {
      await page.goto(`${withoutControls.url}/#/partner`);
      await expect
        .poll(() => page.locator("#partner-status").textContent())
        .toMatch(/^This partner has no controls: its fault rates and outages cannot be set from here\./);
      expect(await page.locator("#partner-controls").isHidden()).toBe(true);
      await expect.poll(() => page.locator("#inflight").textContent()).toMatch(/^In flight: \d+ of \d+$/);
      expect(await page.locator("#error").textContent()).toBe("");
    } finally {
      await page.close();
      await withoutControls.close();
    }
  });

  it("follows the system's dark mode", { timeout: 30_000 }, async () => {
    const page = await browser.newPage({ colorScheme: "dark" });
    try {
      await page.goto(`${api.url}/#/partner`);
      await expect.poll(() => page.locator("#partner-controls").isVisible()).toBe(true);
      // A string: this file is compiled without the DOM's types.
      const colours = await page.evaluate(
        "(() => { const body = getComputedStyle(document.body); return { background: body.backgroundColor, text: body.color }; })()",
      );
      expect(colours).toEqual({ background: "rgb(22, 22, 22)", text: "rgb(236, 236, 236)" });
      await page.screenshot({ path: join(ARTIFACTS, "dashboard-partner-dark.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });
});
