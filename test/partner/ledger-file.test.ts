import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { type LedgerFile, openLedgerFile } from "../../partner/ledger-file.js";
import type { LedgerReport } from "../../partner/ledger-report.js";
import { type PartnerService, startPartnerService } from "../../partner/partner-service.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

let dir: string;
const open: Array<{ service: PartnerService; file: LedgerFile }> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sas-ledger-"));
});

afterEach(async () => {
  for (const { service, file } of open.splice(0)) {
    await service.close();
    file.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function startOnFile(options: { permanent?: number } = {}) {
  const file = openLedgerFile(join(dir, "partner.sqlite"));
  const service = await startPartnerService({
    clock: new VirtualClock(),
    logger: new MemoryLogger(),
    ledger: file.ledger,
    faults: { permanent: options.permanent ?? 0 },
  });
  open.push({ service, file });
  return { service, file };
}

async function stop(entry: { service: PartnerService; file: LedgerFile }) {
  open.splice(open.indexOf(entry), 1);
  await entry.service.close();
  entry.file.close();
}

async function call(url: string, operation: string, key: string, body: Record<string, unknown>) {
  const answer = await fetch(`${url}/operations/${operation}`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

describe("a partner ledger kept in a file", () => {
  it("keeps keys, effects, undos and counters across a restart: a retried key is replayed, not applied again", async () => {
    const first = await startOnFile();
    const charged = await call(first.service.url, "chargePayment", "k-pay", { orderId: "o-1" });
    await call(first.service.url, "reserveInventory", "k-res", { orderId: "o-1" });
    await call(first.service.url, "releaseInventory", "k-rel", { orderId: "o-1", reference: "res-000001" });
    const before = first.service.ledgerData();
    await stop(first);

    const second = await startOnFile();
    expect(second.file.restoredEvents).toBeGreaterThan(0);
    expect(second.service.ledgerData()).toEqual(before);
    const retried = await call(second.service.url, "chargePayment", "k-pay", { orderId: "o-1" });
    expect(retried.body).toMatchObject({ reference: charged.body.reference, replayed: true });
    const next = await call(second.service.url, "chargePayment", "k-pay-2", { orderId: "o-2" });
    expect(next.body.reference).toBe("pay-000002"); // numbering goes on, no reference issued twice
    const ledger = second.service.ledger();
    expect(ledger.effects).toBe(3);
    expect(ledger.undos).toBe(1);
    expect(ledger.duplicateEffects).toBe(0);
    expect(ledger.callsForKey("k-pay")).toBe(2);
  });

  it("keeps a permanent rejection sticky across a restart", async () => {
    const first = await startOnFile({ permanent: 1 });
    const refused = await call(first.service.url, "chargePayment", "k-1", { orderId: "o-1" });
    expect(refused.status).toBe(422);
    await stop(first);
    const second = await startOnFile({ permanent: 0 });
    expect((await call(second.service.url, "chargePayment", "k-1", { orderId: "o-1" })).status).toBe(422);
    expect(second.service.ledger().effects).toBe(0);
  });

  it("answers GET /ledger with what was applied and undone per order and operation", async () => {
    const { service } = await startOnFile();
    await call(service.url, "reserveInventory", "k-1", { orderId: "o-1" });
    await call(service.url, "chargePayment", "k-2", { orderId: "o-1" });
    await call(service.url, "releaseInventory", "k-3", { orderId: "o-1", reference: "res-000001" });
    await call(service.url, "arrangeShipment", "k-4", { orderId: "o-2" });
    const answer = await fetch(`${service.url}/ledger`);
    expect(answer.status).toBe(200);
    const report = (await answer.json()) as LedgerReport;
    expect(report.totals).toMatchObject({ calls: 4, effects: 3, undos: 1, duplicateEffects: 0 });
    expect(report.byOrder["o-1"]).toEqual({
      calls: 3,
      effects: { reserveInventory: { applied: 1, undone: 1 }, chargePayment: { applied: 1, undone: 0 } },
    });
    expect(report.byOrder["o-2"]).toEqual({
      calls: 1,
      effects: { arrangeShipment: { applied: 1, undone: 0 } },
    });
  });
});

describe("F24-10: a ledger file read back", () => {
  it("refuses an event of the wrong shape, naming the file, the event and the field", () => {
    const path = join(dir, "partner.sqlite");
    const first = openLedgerFile(path);
    first.ledger.countCall("chargePayment", "k-1", "o-1");
    first.close();
    const db = new Database(path);
    db.prepare("INSERT INTO partner_events (event) VALUES (?)").run(
      JSON.stringify({ kind: "effect", key: "k-1", operation: "chargePayment", orderId: "o-1" }),
    );
    db.close();
    expect(() => openLedgerFile(path)).toThrow(`invalid ${path} event 2: at: `);
  });
});

describe("sas partner --ledger", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });

  function partner(port: number, ledger: string): Promise<string> {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "laptop/cli/main.ts", "partner", "--port", String(port), "--ledger", ledger],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    children.push(child);
    return new Promise((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(out);
      });
      child.once("exit", (code) => reject(new Error(`sas partner exited with ${code}: ${out}`)));
    });
  }

  it("survives SIGKILL: an effect answered before the kill is replayed after the restart, never applied twice", async () => {
    const ledger = join(dir, "partner.sqlite");
    const port = 20_000 + (process.pid % 20_000);
    const url = `http://127.0.0.1:${port}`;
    expect(await partner(port, ledger)).toContain("0 events restored");
    const applied = await call(url, "chargePayment", "k-1", { orderId: "o-1" });
    expect(applied.body).toMatchObject({ reference: "pay-000001", replayed: false });
    children[0]?.kill("SIGKILL");
    await new Promise((resolve) => children[0]?.once("exit", resolve));

    expect(await partner(port, ledger)).toMatch(/[1-9]\d* events restored/);
    const retried = await call(url, "chargePayment", "k-1", { orderId: "o-1" });
    expect(retried.body).toMatchObject({ reference: "pay-000001", replayed: true });
    const report = (await (await fetch(`${url}/ledger`)).json()) as LedgerReport;
    expect(report.byOrder["o-1"]?.effects.chargePayment).toEqual({ applied: 1, undone: 0 });
  }, 30_000);
});
