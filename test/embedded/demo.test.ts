import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runDemo } from "../../laptop/embedded/demo.js";
import { EMBEDDED_SYNCHRONOUS } from "../../laptop/embedded/embedded-stack.js";

const NO_FAULTS = { transient: 0, permanent: 0, slow: 0, lostReply: 0 };

describe("sas demo", () => {
  it.each(["activity", "queue"] as const)(
    "settles a faulty batch with the invariants intact (Agent as %s)",
    async (agent) => {
      const summary = await runDemo({
        orders: 40,
        faults: { transient: 0.2, permanent: 0.05, slow: 0, lostReply: 0.1 },
        duplicateReplies: 0.1,
        seed: 11,
        agent,
        data: ":memory:",
        // Usually 8 s; about 22 s when an interleaving opens a partner's breaker and an order waits out
        // its attempt timeout. The demo's own limit comes before the test's, so a miss says what hung.
        timeoutMs: 120_000,
        env: {},
      });
      expect(summary.invariants).toEqual({ ok: true, violations: [] });
      const { orders } = summary;
      expect(orders.Pending + orders.Processing + orders.Compensating).toBe(0);
      expect(
        orders.Processed +
          orders.Error +
          orders.Compensated +
          orders.CompensationFailed +
          orders.deadLettered,
      ).toBe(40);
      expect(summary.partner.duplicateEffects).toBe(0);
      expect(summary.partner.calls).toBeGreaterThan(summary.partner.effects); // the faults did bite
      expect(summary.storage).toMatchObject({ database: "memory", journalMode: "memory", commits: null });
    },
    150_000,
  );

  it("counts the run's commits on disk, at the embedded host's durability, beside the storage floor", async () => {
    const data = mkdtempSync(join(tmpdir(), "sas-demo-test-"));
    try {
      const summary = await runDemo({
        orders: 20,
        faults: NO_FAULTS,
        duplicateReplies: 0,
        seed: 3,
        agent: "activity",
        data,
        timeoutMs: 60_000,
        env: {},
      });
      expect(summary.orders.Processed).toBe(20);
      const { storage } = summary;
      expect(storage).toMatchObject({
        database: "file",
        journalMode: "wal",
        synchronous: EMBEDDED_SYNCHRONOUS,
      });
      // Every order is at least accepted, submitted, claimed and settled, each in a commit of its own.
      expect(storage.commits).toBeGreaterThanOrEqual(20 * 4);
      // A commit writes at least one row; the audit trigger adds one per record write.
      expect(storage.rowsWritten).toBeGreaterThan(storage.commits ?? 0);
      expect(storage.commitsPerSecond).toBeCloseTo(
        (storage.commits ?? 0) / (20 / summary.throughput.ordersPerSecond),
        -2,
      );
      expect(storage.singleRowCommitsPerSecond).toBeGreaterThan(storage.commitsPerSecond ?? 0);
      expect(summary.submission.unsettledWhenPosted).toBeLessThanOrEqual(20);
      expect(summary.peakRssMb).toBeGreaterThan(10);
      // The window is the throughput's seconds; the CPU is spent over the same seconds.
      const windowSeconds = (Date.parse(summary.window.to) - Date.parse(summary.window.from)) / 1_000;
      expect(20 / windowSeconds).toBeCloseTo(summary.throughput.ordersPerSecond, -1);
      expect(summary.cpu.msPerOrder).toBeGreaterThan(0);
      expect(summary.cpu.coresBusy).toBeCloseTo((summary.cpu.msPerOrder * 20) / 1_000 / windowSeconds, 1);
      expect(summary.cpu.cores).toBeGreaterThanOrEqual(1);
      // A unit slip would show here: no process keeps more cores busy than the machine has, or none.
      expect(summary.cpu.coresBusy).toBeGreaterThan(0.05);
      expect(summary.cpu.coresBusy).toBeLessThanOrEqual(summary.cpu.cores + 1);
      // The floor's database is removed; the run's own stays where it was asked to be.
      expect(readdirSync(data).filter((name) => name.startsWith("sas-commit-floor-"))).toEqual([]);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});
