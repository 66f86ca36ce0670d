import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedStorefront } from "../../laptop/embedded/storefront.js";
import { retryDetail } from "../../src/domain/status-message.js";
import { runUntil, type Scenario, scenarioPerTest } from "../pipeline/pipeline-harness.js";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";
import { getJson, keptButFailing, openShop } from "./shop.js";
import { openEventStream } from "./sse-client.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/storefront");
const DOCS_IMAGE = join(import.meta.dirname, "../../docs/images/storefront.png");
// docs/storefront.md shows one light screenshot: written when missing or asked for, so that an ordinary
// run leaves the committed image (whose order id and times differ each run) alone.
const updateDocsImage = !existsSync(DOCS_IMAGE) || process.env.UPDATE_DOCS_IMAGES === "1";
const available = chromiumAvailable();

const openScenario = scenarioPerTest();
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function withShop(s: Scenario, body: (page: Page, url: string) => Promise<void>): Promise<void> {
  const storefront = await startEmbeddedStorefront({
    pipeline: s.pipeline,
    port: 0,
    host: "127.0.0.1",
    data: ":memory:",
    logger: s.logger,
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  try {
    await body(page, storefront.url);
  } finally {
    await page.close();
    await storefront.close();
  }
}

const orderState = (page: Page) => page.locator("#order-view").getByRole("status");

/** Moves the pipeline on until the order page's state names a final state. */
async function untilFinalOnPage(s: Scenario, page: Page): Promise<string> {
  const final = /^(Processed|Error|Compensated|CompensationFailed)\b/;
  await runUntil(s, async () => final.test((await orderState(page).textContent()) ?? ""), {
    maxMs: 5 * 60_000,
  });
  return (await orderState(page).textContent()) ?? "";
}

async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

describe.runIf(available)("the storefront in a browser", () => {
  it("adds two products to the cart, places the order and sees it Processed, in light and dark", {
    timeout: 60_000,
  }, async () => {
    const s = await openScenario();
    await withShop(s, async (page, url) => {
      await page.emulateMedia({ colorScheme: "light" });
      await page.goto(`${url}/`);
      const add = page.getByRole("button", { name: "Add to cart" });
      await expect.poll(() => add.count()).toBeGreaterThanOrEqual(2);
      await add.nth(0).click();
      // The keyboard works too: a real button, reached and pressed without the mouse.
      await add.nth(1).focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => page.locator("#cart-lines tr").count()).toBe(2);
      await page.getByLabel("Quantity of Stoneware mug").fill("2");
      await page.getByLabel("Quantity of Stoneware mug").press("Tab");
      await expect.poll(() => page.locator("#cart-total").textContent()).toBe("€48.50");
      await screenshot(page, "shop-light");
      await page.emulateMedia({ colorScheme: "dark" });
      await screenshot(page, "shop-dark");
      await page.emulateMedia({ colorScheme: "light" });

      await page.getByRole("button", { name: "Place order" }).click();
      await expect.poll(() => page.locator("#order-id").textContent()).toMatch(/^sf-/);
      expect(await untilFinalOnPage(s, page)).toBe("Processed");
      expect(await page.locator("#shop-view").isVisible()).toBe(false);
      await expect
        .poll(() => page.locator("#timeline li strong").allTextContents())
        .toEqual(["Received", "Processing", "Completed"]);
      expect(await page.locator("#order-total").textContent()).toBe("€48.50");
      const light = await screenshot(page, "order-processed-light");
      if (updateDocsImage) copyFileSync(light, DOCS_IMAGE);
      await page.emulateMedia({ colorScheme: "dark" });
      await screenshot(page, "order-processed-dark");
      // The dark scheme is not the light one: the page's background follows prefers-color-scheme.
      expect(await page.evaluate("getComputedStyle(document.body).backgroundColor")).toBe("rgb(22, 22, 21)");
    });
  });

  it("with the partner refusing a step for good, sees the order end failed with its reason, then lists it", {
    timeout: 60_000,
  }, async () => {
    const s = await openScenario();
    s.partner.setFaults({ permanent: 1 });
    await withShop(s, async (page, url) => {
      await page.goto(`${url}/`);
      await page.getByRole("button", { name: "Add to cart" }).first().click();
      await page.getByRole("button", { name: "Place order" }).click();
      const text = await untilFinalOnPage(s, page);
      expect(text).toMatch(/^(Error|Compensated): /);
      expect(text).toContain("out-of-stock");
      await screenshot(page, "order-failed-light");
      await page.emulateMedia({ colorScheme: "dark" });
      await screenshot(page, "order-failed-dark");

      const orderId = (await page.locator("#order-id").textContent()) ?? "";
      await page.getByRole("link", { name: "Your orders", exact: true }).click();
      const row = page.locator("#orders-list tr", { hasText: orderId });
      await expect.poll(() => row.textContent()).toContain("out-of-stock");
      await row.getByRole("link", { name: orderId }).click();
      await expect.poll(() => orderState(page).textContent()).toBe(text);
    });
  });

  it("F24-6: shows the shopper why an order, or the order's live view, was refused", {
    timeout: 60_000,
  }, async () => {
    const shop = await openShop({ limits: { ordersPerMinute: 1, streams: 1 } });
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    try {
      await page.goto(`${shop.storefront.url}/`);
      const add = page.getByRole("button", { name: "Add to cart" }).first();
      await add.click();
      await page.getByRole("button", { name: "Place order" }).click();
      await expect.poll(() => orderState(page).textContent()).toBe("Submitted");
      const orderId = (await page.locator("#order-id").textContent()) ?? "";

      await page.getByRole("link", { name: "Back to the shop" }).click();
      // The page's stream is closed with its view; another client takes the only one there is.
      await expect
        .poll(
          async () => (await openEventStream(`${shop.storefront.url}/api/orders/${orderId}/events`)).status,
        )
        .toBe(200);
      await add.click();
      await page.getByRole("button", { name: "Place order" }).click();
      await expect
        .poll(() => page.getByRole("alert").textContent())
        .toBe(
          "The order was not placed: the shop is taking as many orders as it can (1 a minute); try again in 60 s",
        );
      await screenshot(page, "order-refused-light");

      await page.goto(`${shop.storefront.url}/#/orders/${encodeURIComponent(orderId)}`);
      await expect
        .poll(() => page.locator("#order-notice").textContent())
        .toBe(
          "Live updates are paused: the shop is following as many orders live as it can (1); the page looks again in 15 s",
        );
      expect(await page.locator("#order-notice").isVisible()).toBe(true);
      await expect.poll(() => orderState(page).textContent()).toBe("Submitted");
      await screenshot(page, "stream-refused-light");
    } finally {
      await page.close();
    }
  });

  it("F27: tells the shopper in plain words that an order is being tried again, with times in their zone and UTC on hover", {
    timeout: 60_000,
  }, async () => {
    const shop = await openShop();
    // A phone in Paris: 09:00 UTC on 1 May is 11:00 there.
    const page = await browser.newPage({ viewport: { width: 390, height: 800 }, timezoneId: "Europe/Paris" });
    try {
      await page.goto(`${shop.storefront.url}/`);
      await page.getByRole("button", { name: "Add to cart" }).first().click();
      await page.getByRole("button", { name: "Place order" }).click();
      await expect.poll(() => orderState(page).textContent()).toBe("Submitted");
      const orderId = (await page.locator("#order-id").textContent()) ?? "";
      await shop.tell(orderId, "received", 0);
      await shop.tell(orderId, "processing", 1);
      await expect.poll(() => orderState(page).textContent()).toBe("Processing");
      expect(await page.locator("#timeline .detail").count()).toBe(0);
      await shop.tell(orderId, "processing", 2);

      const retry = "The first attempt did not go through; trying again (attempt 2).";
      const lines = page.locator("#timeline li");
      await expect.poll(() => lines.count()).toBe(3);
      expect(await lines.nth(2).locator(".detail").allTextContents()).toEqual([retry]);
      expect(await page.locator("#order-explain").textContent()).toBe(
        `${retry} Steps already done are not done again, and nothing is charged twice.`,
      );
      await shop.tell(orderId, "processing", 3);
      await expect.poll(() => lines.count()).toBe(4);
      expect(await lines.nth(3).locator(".detail").allTextContents()).toEqual([
        "Attempt 2 did not go through; trying again (attempt 3).",
      ]);
      // After a failed attempt the app names the step that did not finish: the shopper hears who.
      await shop.tell(orderId, "processing", 4, retryDetail("reserveInventory", "DeadlinePassed"));
      await expect.poll(() => lines.count()).toBe(5);
      expect(await lines.nth(4).locator(".detail").allTextContents()).toEqual([
        "The warehouse did not answer; trying again (attempt 4).",
      ]);

      const { body } = await getJson(shop, `/api/orders/${orderId}`);
      const statuses = body.statuses as { at: string }[];
      const first = lines.first().locator("time");
      expect(await first.getAttribute("datetime")).toBe(statuses[0]?.at);
      expect(await first.getAttribute("title")).toBe("2026-05-01T09:00:00.000Z UTC");
      expect(await first.textContent()).toMatch(/^(2026-05-01 )?11:00:00$/);
      expect(await page.locator("#order-view .zone-note").textContent()).toBe(
        "Times are in your time zone (Europe/Paris); hover over one for UTC.",
      );
      expect(await page.evaluate("document.scrollingElement.scrollWidth")).toBeLessThanOrEqual(390);
      await screenshot(page, "order-retried-390");

      await page.getByRole("link", { name: "Your orders", exact: true }).click();
      const placed = page.locator("#orders-list tr", { hasText: orderId }).locator("time");
      await expect.poll(() => placed.getAttribute("title")).toBe("2026-05-01T09:00:00.000Z UTC");
      expect(await placed.textContent()).toMatch(/^(2026-05-01 )?11:00:00$/);
      expect(await page.evaluate("document.scrollingElement.scrollWidth")).toBeLessThanOrEqual(390);
      await screenshot(page, "orders-390");
    } finally {
      await page.close();
    }
  });

  it("F24-3: tells the shopper an order whose send failed is placed, and being sent", {
    timeout: 60_000,
  }, async () => {
    const shop = await openShop({ orders: keptButFailing(1) });
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    try {
      await page.goto(`${shop.storefront.url}/`);
      await page.getByRole("button", { name: "Add to cart" }).first().click();
      await page.getByRole("button", { name: "Place order" }).click();
      await expect.poll(() => orderState(page).textContent()).toBe("Placed, sending");
      expect(await page.locator("#order-explain").textContent()).toMatch(
        /^Placed\. The Scheduler's queue has not/,
      );
      expect(await page.locator("#checkout-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });
});
