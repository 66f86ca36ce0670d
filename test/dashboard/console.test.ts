/**
 * The dashboard as a console, in Chromium, over the embedded host's API on a seeded SQLite store: each
 * view at its own address, back and forward between them, an order's address opened cold (behind a
 * function key too), the overview on a laptop's screen without scrolling, the operator commands offered
 * only where the transition table allows them, the order's picture legible, times in the viewer's zone.
 */
import { mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, ConsoleMessage, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";
import { compensatedLife, resubmittedLife, runningLife } from "./order-lives.js";
import { KEY, keyedProxy, NOW, openSeededHost, type SeededHost } from "./seeded-host.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts");
const available = chromiumAvailable();
const hoursBefore = (hours: number) => new Date(Date.parse(NOW) - hours * 3_600_000).toISOString();

describe.runIf(available)("the console", () => {
  const compensated = compensatedLife("ord-life-compensated", hoursBefore(3));
  const resubmitted = resubmittedLife("ord-life-resubmitted", hoursBefore(4));
  const running = runningLife("ord-life-running", hoursBefore(5));
  let host: SeededHost;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    host = await openSeededHost([compensated, resubmitted, running], 5_000);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  async function opened(path = "/", options: { timezoneId?: string; height?: number } = {}): Promise<Page> {
    const page = await browser.newPage({
      viewport: { width: 1280, height: options.height ?? 800 },
      timezoneId: options.timezoneId ?? "UTC",
    });
    await page.goto(`${host.api.url}${path}`);
    await page.waitForFunction("document.documentElement.dataset.drawnAtMs !== undefined");
    return page;
  }

  const hash = (page: Page) => page.evaluate("location.hash");
  const visibleView = (page: Page) =>
    page.locator("main > .view:not([hidden])").evaluateAll((views) => views.map((v) => v.id));

  it("F27-1: each view has its own address, and back and forward move between them", {
    timeout: 60_000,
  }, async () => {
    const page = await opened();
    try {
      expect(await visibleView(page)).toEqual(["view-overview"]);
      await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Orders" }).click();
      expect(await hash(page)).toBe("#/orders");
      expect(await visibleView(page)).toEqual(["view-orders"]);
      await page
        .getByRole("navigation", { name: "Filter by state" })
        .getByRole("link", { name: /^Processed/ })
        .click();
      expect(await hash(page)).toBe("#/orders?state=Processed");
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 1: 25 order(s) in Processed.");
      await page.getByRole("button", { name: "Next page" }).click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 2: 25 order(s) in Processed.");
      const onPage2 = await page.locator("#browse tr").first().getAttribute("data-order-id");
      await page.screenshot({ path: join(ARTIFACTS, "console-orders.png") });

      await page.getByRole("link", { name: `Show order ${onPage2}` }).click();
      expect(await hash(page)).toBe(`#/orders/${onPage2}`);
      await expect.poll(() => page.locator("#detail-id").textContent()).toBe(onPage2);
      expect(await visibleView(page)).toEqual(["view-order"]);
      expect(await page.title()).toBe(`Order ${onPage2} · Orders · Scheduler Agent Supervisor`);

      // Back: the list as it was left, its filter and its page; back again: the list of any state.
      await page.goBack();
      expect(await hash(page)).toBe("#/orders?state=Processed");
      expect(await visibleView(page)).toEqual(["view-orders"]);
      expect(await page.locator("#browse-page").textContent()).toBe("Page 2: 25 order(s) in Processed.");
      expect(await page.locator("#filters [aria-current=page]").getAttribute("data-filter")).toBe(
        "Processed",
      );
      await page.goBack();
      expect(await hash(page)).toBe("#/orders");
      await page.goForward();
      await page.goForward();
      await expect.poll(() => page.locator("#detail-id").textContent()).toBe(onPage2);

      await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Partner" }).click();
      expect(await hash(page)).toBe("#/partner");
      expect(await visibleView(page)).toEqual(["view-partner"]);
      await page.goto(`${host.api.url}/#/nowhere`);
      expect(await visibleView(page)).toEqual(["view-missing"]);
    } finally {
      await page.close();
    }
  });

  it("F27-2: an order's address opened cold shows that order, and its link back lists the orders", {
    timeout: 60_000,
  }, async () => {
    const page = await opened(`/#/orders/${compensated.record.orderId}`);
    try {
      await expect.poll(() => page.locator("#order-svg g.bar").count()).toBe(5);
      expect(await page.locator("#detail-id").textContent()).toBe(compensated.record.orderId);
      expect(await page.locator("#detail-badge").textContent()).toBe("Compensated");
      await page.getByRole("link", { name: "← Orders" }).click();
      expect(await hash(page)).toBe("#/orders");
      await expect.poll(() => page.locator("#browse tr").count()).toBe(25);

      await page.goto(`${host.api.url}/#/orders/ord-nobody`);
      await expect.poll(() => page.locator("#detail-missing").textContent()).toBe("No order ord-nobody.");
      expect(await page.locator("#detail-body").isHidden()).toBe(true);
    } finally {
      await page.close();
    }
  });

  it("F27-2: behind a function key, as in Azure, an order's address opened cold carries the key everywhere", {
    timeout: 60_000,
  }, async () => {
    const refused: string[] = [];
    const proxy = await keyedProxy(host.api.url, refused);
    const page = await browser.newPage();
    try {
      const { address, port } = proxy.address() as AddressInfo;
      const orderId = resubmitted.record.orderId;
      await page.goto(`http://${address}:${port}/api/dashboard?code=${KEY}#/orders/${orderId}`);
      await expect.poll(() => page.locator("#order-svg g.bar").count()).toBe(5);
      await page.getByRole("link", { name: "Partner" }).click();
      await expect.poll(() => page.locator("#breakers tr").count()).toBeGreaterThan(0);
      expect(new URL(page.url()).search).toBe(`?code=${KEY}`);
      // No request without the key: not a module's import, not the browser's own /favicon.ico.
      expect(refused).toEqual([]);
    } finally {
      await page.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("F27-3: the overview at 1280×800 shows the counts, the two charts and the breakers without scrolling", {
    timeout: 60_000,
  }, async () => {
    const page = await opened("/");
    try {
      await expect.poll(() => page.locator("#partner-plot g.operation").count()).toBeGreaterThan(0);
      await page.screenshot({ path: join(ARTIFACTS, "console-overview.png") });
      for (const id of ["counts", "finished-chart", "backlog-chart", "overview-breakers"]) {
        const box = await page.locator(`#${id}`).boundingBox();
        expect(box, id).not.toBeNull();
        expect(box?.y ?? 0, id).toBeGreaterThanOrEqual(0);
        expect((box?.y ?? 0) + (box?.height ?? 0), id).toBeLessThanOrEqual(800);
        expect((box?.x ?? 0) + (box?.width ?? 0), id).toBeLessThanOrEqual(1280);
      }
      expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(1280);
      expect(await page.evaluate("window.scrollY")).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("F27-4: Resubmit… is not offered on a Processed order, and the page says why; on an Error order it is", {
    timeout: 60_000,
  }, async () => {
    const page = await opened(`/#/orders/${resubmitted.record.orderId}`);
    try {
      await expect.poll(() => page.locator("#detail-badge").textContent()).toBe("Processed");
      expect(await page.getByRole("button", { name: "Resubmit…" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Compensate…" }).count()).toBe(0);
      expect(await page.locator("#actions-note").textContent()).toBe(
        "Resubmit applies to an order in Error; this one is Processed. " +
          "Compensate applies to an order in Error or CompensationFailed; this one is Processed.",
      );

      await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Orders" }).click();
      await page.getByRole("link", { name: /^Error/ }).click();
      await expect.poll(() => page.locator("#browse tr").count()).toBe(25);
      await page.locator("#browse a").first().click();
      await expect.poll(() => page.locator("#detail-badge").textContent()).toBe("Error");
      expect(await page.getByRole("button", { name: "Resubmit…" }).isVisible()).toBe(true);
      // A seeded Error order has applied nothing, so there is nothing to compensate.
      expect(await page.getByRole("button", { name: "Compensate…" }).count()).toBe(0);
      expect(await page.locator("#actions-note").textContent()).toBe(
        "Compensate has nothing to undo: no step applied its effect.",
      );
    } finally {
      await page.close();
    }
  });

  it("F27-5: the order's picture names every step, short ones below their bar, on an axis with ticks", {
    timeout: 60_000,
  }, async () => {
    for (const life of [resubmitted, compensated, running]) {
      const page = await opened(`/#/orders/${life.record.orderId}`);
      try {
        await expect.poll(() => page.locator("#order-svg g.bar").count()).toBeGreaterThan(0);
        const bars = await page.locator("#order-svg g.bar").evaluateAll((groups) =>
          groups.map((g) => {
            // An SVG element's box, in the picture's units (this file is compiled without the DOM's types).
            type Boxed = { getBBox(): { x: number; y: number; width: number; height: number } };
            const rect = (g.querySelector("rect") as unknown as Boxed).getBBox();
            const text = g.querySelector("text.bar-label") as unknown as
              | (Boxed & { textContent: string; classList: { contains(name: string): boolean } })
              | null;
            const box = text?.getBBox();
            return {
              step: g.getAttribute("data-step"),
              label: text?.textContent ?? null,
              inside: text?.classList.contains("inside") ?? false,
              rect: { x: rect.x, width: rect.width, y: rect.y },
              text: box ? { x: box.x, width: box.width, y: box.y, height: box.height } : null,
            };
          }),
        );
        for (const bar of bars) {
          expect(bar.label, `${bar.step} named`).toMatch(new RegExp(`${bar.step}$`));
          expect(bar.rect.width, `${bar.step} visible`).toBeGreaterThanOrEqual(6);
          if (bar.inside) {
            expect(bar.text?.x ?? 0).toBeGreaterThanOrEqual(bar.rect.x);
            expect((bar.text?.x ?? 0) + (bar.text?.width ?? 0), `${bar.step} fits`).toBeLessThanOrEqual(
              bar.rect.x + bar.rect.width,
            );
          }
        }
        // No label runs into another.
        const boxes = bars.flatMap((b) => (b.text ? [b.text] : []));
        for (const [i, a] of boxes.entries()) {
          for (const b of boxes.slice(i + 1)) {
            const apart =
              a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
            expect(apart, `${JSON.stringify(a)} and ${JSON.stringify(b)}`).toBe(true);
          }
        }
        expect(await page.locator("#order-svg .axis .tick").count()).toBeGreaterThanOrEqual(3);
        await page.screenshot({
          path: join(ARTIFACTS, `console-${life.record.orderId}.png`),
          fullPage: true,
        });
      } finally {
        await page.close();
      }
    }
    // The resubmitted order's last step took 300 ms of a two-minute life: too short for its name inside.
    const page = await opened(`/#/orders/${resubmitted.record.orderId}`);
    try {
      const notify = page.locator('#order-svg g.bar[data-step="notifyCustomer"]');
      await expect.poll(() => notify.count()).toBe(1);
      expect(await notify.locator("text.bar-label.outside").textContent()).toBe("notifyCustomer");
      await notify.focus();
      expect(await notify.getAttribute("aria-label")).toMatch(
        /^notifyCustomer · attempt 2 · completed, 0\.300 s:/,
      );
    } finally {
      await page.close();
    }
  });

  it("F27-6: times are shown in the viewer's zone, with the UTC instant on hover", {
    timeout: 60_000,
  }, async () => {
    const page = await opened(`/#/orders/${compensated.record.orderId}`, { timezoneId: "Asia/Kolkata" });
    try {
      await expect.poll(() => page.locator("#timeline tr").count()).toBe(compensated.record.history.length);
      const first = page.locator("#timeline tr").first().locator("time");
      const at = compensated.record.history[0]?.at ?? "";
      expect(await first.getAttribute("datetime")).toBe(at);
      expect(await first.getAttribute("title")).toBe(`${at} UTC`);
      // 09:00:30 UTC is 14:30:30 in India (UTC+05:30); the order's day is not today's, so it is dated.
      expect(await first.textContent()).toBe("2026-03-02 14:30:30.000");
      // ICU names the zone by its older name.
      expect(await page.locator("#zone").textContent()).toMatch(
        /^Times in Asia\/(Kolkata|Calcutta) \(UTC\+05:30\); hover one for UTC\.$/,
      );
      expect(await page.locator("#compensation-log li").first().textContent()).toBe(
        "reserveInventory: Compensated, logged 2026-03-02 14:30:31.200",
      );
    } finally {
      await page.close();
    }
  });

  it("F27-7: a page with no warnings and no issues in Chromium, an icon of its own, no empty table's headers", {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const messages: string[] = [];
    const requested: string[] = [];
    const issues: string[] = [];
    page.on("console", (message: ConsoleMessage) => {
      if (!["log", "info", "debug"].includes(message.type()))
        messages.push(`${message.type()}: ${message.text()}`);
    });
    page.on("request", (request) => requested.push(new URL(request.url()).pathname));
    const devtools = await page.context().newCDPSession(page);
    devtools.on("Audits.issueAdded", ({ issue }) => issues.push(JSON.stringify(issue)));
    await devtools.send("Audits.enable");
    try {
      for (const view of ["#/", "#/orders?state=Error", `#/orders/${compensated.record.orderId}`]) {
        await page.goto(`${host.api.url}/${view}`);
        await page.waitForFunction("document.documentElement.dataset.drawnAtMs !== undefined");
      }
      await expect.poll(() => page.locator("#order-svg g.bar").count()).toBe(5);
      expect(await page.locator("link[rel=icon]").getAttribute("href")).toMatch(/^data:image\/svg\+xml,/);
      expect(requested).not.toContain("/favicon.ico");
      expect(messages).toEqual([]);
      expect(issues).toEqual([]);

      // A state with no orders: no table's headers, a sentence instead.
      await page.goto(`${host.api.url}/#/orders?state=Compensating`);
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 1: 5 order(s) in Compensating, the last page.");
      expect(await page.locator("#browse-table").isVisible()).toBe(true);
      await host.db.exec(
        "UPDATE state_records SET process_state = 'Pending' WHERE process_state = 'Compensating'",
      );
      await page.getByRole("button", { name: "Read again" }).click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("Page 1: no orders in Compensating.");
      expect(await page.locator("#browse-table").isVisible()).toBe(false);
      expect(await page.locator("#browse-table thead").isVisible()).toBe(false);
    } finally {
      await page.close();
    }
  });
});
