import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";
import { openShop } from "./shop.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/storefront");
const DOCS_IMAGE = join(import.meta.dirname, "../../docs/images/storefront-phone.png");
// Like storefront.png (storefront-page.test.ts): written when missing or asked for.
const updateDocsImage = !existsSync(DOCS_IMAGE) || process.env.UPDATE_DOCS_IMAGES === "1";
const available = chromiumAvailable();
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** The element's box in the page, as the window is scrolled now (the same for every box compared). */
async function boxOf(locator: Locator): Promise<Box> {
  const box = await locator.boundingBox();
  if (!box) throw new Error(`${locator} is not shown`);
  return box;
}

async function layoutOf(page: Page) {
  return {
    scrollWidth: Number(await page.evaluate("document.scrollingElement.scrollWidth")),
    innerWidth: Number(await page.evaluate("innerWidth")),
    cart: await boxOf(page.locator("#cart")),
    products: await Promise.all((await page.locator(".product").all()).map(boxOf)),
  };
}

/** Products side by side in the first row of the grid. */
const columnsOf = (products: readonly Box[]) => products.filter((p) => p.y === products[0]?.y).length;

describe.runIf(available)("F27: the shop on a phone, a tablet and a desktop", () => {
  for (const width of [360, 390, 700, 1280]) {
    it(`F27: at ${width} px the page does not scroll sideways and the cart covers no product`, {
      timeout: 30_000,
    }, async () => {
      const shop = await openShop();
      const page = await browser.newPage({ viewport: { width, height: 800 } });
      try {
        await page.goto(`${shop.storefront.url}/`);
        const add = page.getByRole("button", { name: "Add to cart" });
        await expect.poll(() => add.count()).toBe(5);
        await add.nth(0).click();
        await add.nth(2).click();
        await expect.poll(() => page.locator("#cart-lines tr").count()).toBe(2);
        const light = join(ARTIFACTS, `shop-${width}-light.png`);
        await page.screenshot({ path: light, fullPage: true });
        if (width === 390 && updateDocsImage) copyFileSync(light, DOCS_IMAGE);
        await page.emulateMedia({ colorScheme: "dark" });
        await page.screenshot({ path: join(ARTIFACTS, `shop-${width}-dark.png`), fullPage: true });

        const layout = await layoutOf(page);
        expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth);
        expect(layout.products).toHaveLength(5);
        for (const product of layout.products) {
          expect(overlaps(layout.cart, product), JSON.stringify({ cart: layout.cart, product })).toBe(false);
          // 13rem: a name, a sentence and a button side by side without squeezing.
          expect(product.width).toBeGreaterThanOrEqual(208);
        }
        expect(columnsOf(layout.products)).toBeGreaterThanOrEqual(width >= 700 ? 2 : 1);
      } finally {
        await page.close();
      }
    });
  }

  it("F27: on a phone, a link above the products says what is in the cart and takes the shopper to it", {
    timeout: 30_000,
  }, async () => {
    const shop = await openShop();
    const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
    try {
      await page.goto(`${shop.storefront.url}/`);
      const jump = page.getByRole("link", { name: /^View your cart/ });
      await expect.poll(() => jump.textContent()).toBe("View your cart (empty)");
      await page.getByRole("button", { name: "Add to cart" }).nth(1).click();
      await page.getByRole("button", { name: "Add to cart" }).nth(1).click();
      expect(await jump.textContent()).toBe("View your cart (2 items, €36.00)");
      expect(await page.locator("#cart").isVisible()).toBe(true);
      // Below the products: out of sight until the link is followed.
      expect((await boxOf(page.locator("#cart"))).y).toBeGreaterThan(800);
      await jump.click();
      expect(await page.evaluate("document.activeElement.id")).toBe("cart");
      expect((await boxOf(page.locator("#cart"))).y).toBeLessThan(800);
      expect(page.url()).toBe(`${shop.storefront.url}/`);

      await page.setViewportSize({ width: 1280, height: 800 });
      expect(await jump.isVisible()).toBe(false);
    } finally {
      await page.close();
    }
  });
});
