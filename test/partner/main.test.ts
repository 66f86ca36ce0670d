import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type AzuriteBlob, freshContainer, startAzuriteBlob } from "../../laptop/stand-ins/azurite.js";
import { PARTNER_KEY_HEADER } from "../../partner/control-contract.js";
import { segmentName } from "../../partner/ledger-blob.js";
import { openLedgerFile } from "../../partner/ledger-file.js";
import { BOOKS_FAILED_EXIT_CODE, main } from "../../partner/main.js";

const ROOT = join(import.meta.dirname, "../..");
const KEY = "main-test-access-key";

let azurite: AzuriteBlob;
beforeAll(async () => {
  azurite = await startAzuriteBlob();
}, 60_000);
afterAll(async () => {
  await azurite?.stop();
});

const children: ChildProcess[] = [];
const cleanUps: Array<() => unknown> = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const cleanUp of cleanUps.splice(0)) await cleanUp();
  vi.restoreAllMocks();
});

function errors(): string[] {
  const lines: string[] = [];
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  });
  return lines;
}

interface RunningPartner {
  readonly child: ChildProcess;
  readonly lines: Array<Record<string, unknown>>;
  readonly url: string;
}

/** `node partner/main.ts` with `env`, once it logs that it serves. */
function startPartner(env: Record<string, string>): Promise<RunningPartner> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("PARTNER_")),
  );
  const child = spawn(process.execPath, ["--import", "tsx", "partner/main.ts"], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: Array<Record<string, unknown>> = [];
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  return new Promise((resolve, reject) => {
    let pending = "";
    child.stdout?.on("data", (chunk) => {
      pending += String(chunk);
      const complete = pending.split("\n");
      pending = complete.pop() ?? "";
      for (const text of complete) {
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        if (line.event === "partner.started") resolve({ child, lines, url: String(line.url) });
      }
    });
    child.once("exit", (code) => reject(new Error(`the partner exited with ${code}: ${stderr}`)));
  });
}

async function stopPartner(partner: RunningPartner): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => partner.child.once("exit", resolve));
  partner.child.kill("SIGTERM");
  return exited;
}

async function charge(url: string, key: string | undefined) {
  const response = await fetch(`${url}/operations/chargePayment`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "idempotency-key": "ord-1:chargePayment",
      ...(key ? { [PARTNER_KEY_HEADER]: key } : {}),
    },
    body: JSON.stringify({ orderId: "ord-1" }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the partner as an app of its own", () => {
  it("keeps its books in an append-blob journal across a stop and a start: the key's result is replayed", {
    timeout: 60_000,
  }, async () => {
    const place = freshContainer(azurite, "partner-ledger");
    cleanUps.push(place.dispose);
    const env = {
      PARTNER_ACCESS_KEY: KEY,
      PARTNER_LEDGER_CONNECTION_STRING: azurite.connectionString,
      PARTNER_LEDGER_CONTAINER: place.containerName,
      PORT: "0",
      PARTNER_HOST: "127.0.0.1",
      PARTNER_FAULT_TRANSIENT: "0",
      PARTNER_FAULT_PERMANENT: "0",
      PARTNER_FAULT_SLOW: "0",
      PARTNER_FAULT_LOST_REPLY: "0",
    };
    const first = await startPartner(env);
    expect(first.lines.find((line) => line.event === "partner.books")).toMatchObject({
      kind: "connectionString",
      restoredEvents: 0,
    });
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
    expect((await charge(first.url, undefined)).status).toBe(401);
    const applied = await charge(first.url, KEY);
    expect(applied).toMatchObject({ status: 200, body: { reference: "pay-000001", replayed: false } });
    expect(await stopPartner(first)).toBe(0);
    expect(first.lines.at(-1)).toMatchObject({ event: "partner.stopped" });

    const second = await startPartner(env);
    const restored = second.lines.find((line) => line.event === "partner.books");
    // The start-up rates, the call and its effect; not the refused call (F24-5).
    expect(restored?.restoredEvents).toBe(3);
    expect(await charge(second.url, KEY)).toMatchObject({
      status: 200,
      body: { reference: "pay-000001", replayed: true },
    });
    const ledger = (await (
      await fetch(`${second.url}/ledger`, { headers: { [PARTNER_KEY_HEADER]: KEY } })
    ).json()) as { totals: Record<string, number> };
    // The refused caller was counted by the first process only: not in the books.
    expect(ledger.totals).toMatchObject({ calls: 2, effects: 1, unauthorized: 0 });
    expect(await stopPartner(second)).toBe(0);
  });

  it("F24-7: stops with exit status 3 once a conflict fails its books, so App Service starts it again", {
    timeout: 60_000,
  }, async () => {
    const place = freshContainer(azurite, "partner-ledger");
    cleanUps.push(place.dispose);
    const partner = await startPartner({
      PARTNER_ACCESS_KEY: KEY,
      PARTNER_LEDGER_CONNECTION_STRING: azurite.connectionString,
      PARTNER_LEDGER_CONTAINER: place.containerName,
      PORT: "0",
      PARTNER_HOST: "127.0.0.1",
      PARTNER_FAULT_TRANSIENT: "0",
      PARTNER_FAULT_PERMANENT: "0",
      PARTNER_FAULT_SLOW: "0",
      PARTNER_FAULT_LOST_REPLY: "0",
    });
    const exited = new Promise<number | null>((resolve) => partner.child.once("exit", resolve));
    expect((await charge(partner.url, KEY)).status).toBe(200);
    const stranger = `${JSON.stringify({ kind: "count", counter: "conflicts" })}\n`;
    await place.container().getAppendBlobClient(segmentName(1)).appendBlock(stranger, stranger.length);

    // Never answered 200: refused, or its connection dropped as the partner stops.
    const refused = await charge(partner.url, KEY).then(
      (answer) => answer.status,
      () => "connection dropped",
    );
    expect([500, "connection dropped"]).toContain(refused);
    const code = await Promise.race([exited, delay(20_000).then(() => "still running")]);
    expect(code).toBe(BOOKS_FAILED_EXIT_CODE);
    expect(partner.lines.find((line) => line.event === "partner.journal.failed")).toMatchObject({
      forGood: true,
    });
  });

  it("exits 2 naming the setting when a setting is wrong", async () => {
    const lines = errors();
    expect(await main({ PARTNER_LEDGER_FILE: "p.sqlite", PORT: "http" })).toBe(2);
    expect(lines).toEqual([
      'partner: invalid partner settings: PORT must be a whole number from 0 to 65535; got "http"; PARTNER_ACCESS_KEY is required: the key every caller must send',
    ]);
  });

  it("exits 2 naming the port and PORT when the port is taken, its books closed", async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    cleanUps.push(() => new Promise((resolve) => holder.close(resolve)));
    const port = (holder.address() as { port: number }).port;
    const folder = mkdtempSync(join(tmpdir(), "sas-partner-main-"));
    cleanUps.push(() => rmSync(folder, { recursive: true, force: true }));
    const file = join(folder, "partner.sqlite");
    const lines = errors();
    const env = {
      PARTNER_ACCESS_KEY: KEY,
      PARTNER_LEDGER_FILE: file,
      PORT: String(port),
      PARTNER_HOST: "127.0.0.1",
    };
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(await main(env)).toBe(2);
    expect(lines).toEqual([
      `partner: port ${port} on 127.0.0.1 is already in use: stop what holds it, or set PORT to another`,
    ]);
    const reopened = openLedgerFile(file);
    expect(reopened.restoredEvents).toBe(0);
    reopened.close();
  });
});
