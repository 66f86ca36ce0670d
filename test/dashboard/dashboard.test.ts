import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpApi } from "../../laptop/embedded/http-api.js";
import {
  orderMessage,
  post,
  recordOf,
  runUntil,
  scenarioPerTest,
  terminal,
} from "../pipeline/pipeline-harness.js";
import { chromiumAvailable, launchChromium } from "../support/chromium.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts");
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

describe.runIf(available)("the dashboard in a browser", () => {
  it("F27-4: shows the counts, opens an Error order from the list needing attention, resubmits it with a reason, sees it Processed, and no longer offers Resubmit…", {
    timeout: 60_000,
  }, async () => {
    // No circuit breaker: a partner down through every call must spend the order's recoveries, not defer it.
    const s = await openScenario({ MAX_RECOVERIES: "1", BREAKER_ENABLED: "false" });
    const backend = s.pipeline.apiBackend();
    const { stats } = backend;
    const api = await startHttpApi({ port: 0, logger: s.logger, backend });
    const page = await browser.newPage({ timezoneId: "UTC" });
    try {
      // The partner is down through both attempts: the order ends in Error, its first step in doubt.
      s.partner.setFaults({ transient: 1 });
      await post(s, orderMessage("ord-stuck"));
      await runUntil(s, terminal(s, "ord-stuck"));
      expect((await recordOf(s, "ord-stuck")).processState).toBe("Error");
      s.partner.setFaults({});

      await page.goto(`${api.url}/`);
      await expect.poll(() => page.locator("#counts li[data-state=Error] b").textContent()).toBe("1");
      await expect.poll(() => page.locator("#inflight").textContent()).toBe("In flight: 0 of 200");
      // The Supervisor's last scan as the journal has it (the clock stands still: no scan runs meanwhile).
      const scan = await stats.lastScan();
      if (!scan) throw new Error("the Supervisor recovered the order, so it recorded a scan");
      await expect.poll(() => page.locator("#last-scan time").getAttribute("datetime")).toBe(scan.finishedAt);
      expect(await page.locator("#last-scan").textContent()).toMatch(
        new RegExp(` by embedded-supervisor: scanned ${scan.found.scanned}, reset \\d+`),
      );
      const { finishedPerMinute } = await stats.throughput();
      expect(finishedPerMinute.reduce((sum, n) => sum + n, 0)).toBe(1); // the order that ended in Error
      expect(await page.locator("#throughput").textContent()).toContain(finishedPerMinute.join(" · "));
      expect(await page.locator("#oldest-pending").textContent()).toBe("Nothing is Pending.");
      expect(await page.locator("#workflow-versions").textContent()).toBe(
        "v1: 0 in flight, 0 awaiting an operator · v2: 0 in flight, 0 awaiting an operator · v3: 0 in flight, 0 awaiting an operator · v4 (new orders): 0 in flight, 1 awaiting an operator",
      );
      expect(await page.locator("#dead-lettered").textContent()).toMatch(
        /^orders 0 · agent-requests 0 · agent-responses 0 \(counted up to 1000 per queue/,
      );
      await page.screenshot({ path: join(ARTIFACTS, "dashboard-counts.png"), fullPage: true });

      await page.getByRole("link", { name: "Needing attention →" }).click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("1 order(s) needing attention.");
      await page.getByRole("link", { name: "Show order ord-stuck" }).click();
      const history = () =>
        page
          .locator("#timeline tr")
          .evaluateAll((rows) =>
            rows.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent).join(" | ")),
          );
      await expect
        .poll(history)
        .toContainEqual(expect.stringMatching(/ \| supervisor \| recover \| Processing → Error \| /));
      expect(await page.locator("#detail-state").textContent()).toContain("workflow v4 · attempt");
      expect(await page.locator("#detail-state").textContent()).toContain("reserveInventory InDoubt");

      await page.getByRole("button", { name: "Resubmit…" }).click();
      await page.getByLabel("Operator").fill("alice");
      await page.getByLabel("Reason").fill("partner is back");
      await page.screenshot({ path: join(ARTIFACTS, "dashboard-resubmit.png"), fullPage: true });
      await page.getByRole("button", { name: "Confirm" }).click();
      await expect
        .poll(() => page.locator("#confirm").evaluate((d) => (d as unknown as { open: boolean }).open))
        .toBe(false);
      expect((await recordOf(s, "ord-stuck")).lastError?.message).toBe("resubmit by alice: partner is back");

      await runUntil(s, terminal(s, "ord-stuck"));
      await expect
        .poll(() => page.locator("#detail-state").textContent(), { timeout: 10_000 })
        .toContain("Processed");
      // Processed: the transition table allows neither command, so neither is offered.
      expect(await page.getByRole("button", { name: "Resubmit…" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Compensate…" }).count()).toBe(0);
      expect(await page.locator("#actions-note").textContent()).toContain(
        "Resubmit applies to an order in Error; this one is Processed.",
      );
      await page.screenshot({ path: join(ARTIFACTS, "dashboard-processed.png"), fullPage: true });

      await page.goBack();
      await page.getByRole("button", { name: "Read again" }).click();
      await expect
        .poll(() => page.locator("#browse-page").textContent())
        .toBe("No orders needing attention.");
      expect(await page.locator("#browse-table").isVisible()).toBe(false);
    } finally {
      await page.close();
      await api.close();
    }
  });
});
