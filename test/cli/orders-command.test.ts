import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ordersCommand } from "../../laptop/cli/orders-command.js";
import { UsageError } from "../../laptop/cli/usage-error.js";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { updateAsRead } from "../../src/state/record-updates.js";
import { type IdlePipeline, openIdlePipeline } from "../support/idle-pipeline.js";
import { pendingRecord, T0 } from "../support/records.js";

const TOKEN = "a-token-of-16-chars";
let idle: IdlePipeline;
let states: StateStore;
let api: HttpApi;
let out: string;
let err: string;
const requests: { url: string; headers: Headers }[] = [];

beforeEach(async () => {
  idle = await openIdlePipeline();
  states = idle.pipeline.states;
  api = await startHttpApi({
    port: 0,
    apiToken: TOKEN,
    logger: idle.logger,
    backend: idle.pipeline.apiBackend(),
  });
  out = "";
  err = "";
  requests.length = 0;
  await states.createIfAbsent({
    ...pendingRecord("ord-err"),
    processState: "Error",
    lastError: { kind: "permanent", code: "Http422", message: "out-of-stock", step: null, at: T0 },
  });
});
afterEach(async () => {
  await api.close();
  await idle.close();
});

function run(...args: string[]): Promise<number> {
  return ordersCommand([...args, "--url", api.url], {
    fetch: (input, init) => {
      requests.push({ url: String(input), headers: new Headers(init?.headers) });
      return fetch(input, init);
    },
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
}

describe("sas orders", () => {
  it("shows one order: its state, steps and last error", async () => {
    expect(await run("show", "ord-err")).toBe(0);
    expect(out).toContain("ord-err  Error  attempt 0  failures 0");
    expect(out).toContain(
      "steps: reserveInventory NotStarted, chargePayment NotStarted, arrangeShipment NotStarted",
    );
    expect(out).toContain("last error: Http422: out-of-stock");
  });

  it("needs the host's API token for a command, and says so without it", async () => {
    expect(await run("resubmit", "ord-err", "--operator", "alice", "--reason", "restocked")).toBe(1);
    expect(err).toBe(
      "401 unauthorized: operator commands need Authorization: Bearer <api token>\n" +
        `${api.url} wants a key: give --key <function key> (the Functions app; sas host prints its key) or --token <API token> (sas start --api-token)\n`,
    );
    expect(
      await run(
        "resubmit",
        "ord-err",
        "--operator",
        "alice",
        "--reason",
        "x",
        "--token",
        "wrong-token-16-chars",
      ),
    ).toBe(1);
    expect(err).toContain(`${api.url} refused the --token given`);
    expect((await states.get("ord-err"))?.processState).toBe("Error");
  });

  it("resubmits an order and exits 0; the same command again is refused with the reason and exits 1", async () => {
    expect(
      await run("resubmit", "ord-err", "--operator", "alice", "--reason", "restocked", "--token", TOKEN),
    ).toBe(0);
    expect(out).toBe("resubmit ord-err: accepted, now Pending\n");
    expect((await states.get("ord-err"))?.processState).toBe("Pending");
    expect(
      await run("resubmit", "ord-err", "--operator", "alice", "--reason", "again", "--token", TOKEN),
    ).toBe(1);
    expect(err).toMatch(/^409 command refused: .*may not resubmit order ord-err in Pending/);
  });

  it("exits 1 for an unknown order, and prints the JSON body as it came with --json", async () => {
    expect(
      await run("compensate", "ord-nobody", "--operator", "bob", "--reason", "x", "--json", "--token", TOKEN),
    ).toBe(1);
    expect(JSON.parse(out)).toEqual({ error: "order not found", orderId: "ord-nobody" });
  });

  it("lists orders as aligned lines, one state at a time, with the flag that fetches the next page", async () => {
    await states.createIfAbsent({ ...pendingRecord("ord-p1"), updatedAt: "2026-01-02T00:00:00.000Z" });
    expect(await run("list", "--limit", "1")).toBe(0);
    expect(out).toMatch(/^ord-p1 {2}Pending {2}2026-01-02T00:00:00.000Z\nmore: --continuation \S+\n$/);
    const token = out.split("--continuation ")[1]?.trim() ?? "";
    out = "";
    expect(await run("list", "--limit", "1", "--continuation", token)).toBe(0);
    expect(out).toBe("ord-err  Error  2026-01-01T00:00:00.000Z  Http422\n");
    out = "";
    expect(await run("list", "--state", "Compensated")).toBe(0);
    expect(out).toBe("no orders\n");
    expect(await run("list", "--state", "Lost")).toBe(2);
    expect(err).toContain("400 invalid list request");
    expect(requests.at(-1)?.url).toMatch(/\/api\/orders\?state=Lost$/);
  });

  it("prints an order's history, one transition a line", async () => {
    expect(
      await run("resubmit", "ord-err", "--operator", "alice", "--reason", "restocked", "--token", TOKEN),
    ).toBe(0);
    out = "";
    expect(await run("history", "ord-err")).toBe(0);
    expect(out).toMatch(/^\S+ {2}#0 {2}operator {2}resubmit {2}Error -> Pending {2}Resubmitted\n$/);
  });

  it("prints the statistics, one aligned line per figure", async () => {
    expect(await run("stats")).toBe(0);
    expect(out).toBe(
      [
        "counts          Pending 0 · Processing 0 · Processed 0 · Error 1 · Compensating 0 · Compensated 0 · CompensationFailed 0",
        "in flight       0/200",
        "oldest pending  none",
        "dead-lettered   orders 0 · agent-requests 0 · agent-responses 0",
        "parked          0",
        "last scan       none recorded yet",
        // The ord-err every test starts with, last changed at T0: now.
        `finished/min    0 · 0 · 0 · 0 · 1 (oldest first, to ${T0}; 0.02/s over the last minute)`,
        "breakers        all closed",
        "",
      ].join("\n"),
    );
    await expect(run("stats", "ord-err")).rejects.toThrow(/sas stats takes no order id/);
  });

  it("shows the oldest Pending order's wait, dead letters, the last scan and throughput, and passes them on with --json", async () => {
    const { pipeline, clock } = idle;
    await states.createIfAbsent(pendingRecord("ord-waiting"));
    const claimed = await states.createIfAbsent(pendingRecord("ord-expired"));
    if (!claimed.created) throw new Error("seeded twice");
    await updateAsRead(states, claimed.record, "starter", {
      type: "claim",
      now: T0,
      attemptTimeoutMs: 1_000,
    });
    await states.createIfAbsent({ ...pendingRecord("ord-done"), processState: "Processed" });
    const orders = pipeline.queue("orders");
    await orders.send({ messageId: "m-1", body: {} });
    const [message] = await orders.receive(1);
    if (message) await orders.deadLetter(message, { reason: "InvalidOrderMessage", description: "bad" });
    await clock.advance(125_000);
    // ord-expired goes back to Pending, changed now; its wait still counts from T0, as it made no progress
    // since (F24-4), and it comes before ord-waiting, accepted at the same time, by its id.
    await pipeline.runSupervisor();
    expect(await run("stats")).toBe(0);
    const at = "2026-01-01T00:02:05.000Z";
    expect(out.split("\n").slice(2)).toEqual([
      `oldest pending  ord-expired, waiting 2m 5s (since ${T0})`,
      "dead-lettered   orders 0 · agent-requests 0 · agent-responses 0",
      "parked          1",
      expect.stringMatching(
        new RegExp(
          `^last scan {7}${at} by embedded-supervisor: scanned 1 · resets 1 · toError 0 · toCompensation 0 · stalled 0 · lostRaces 0; 1 page\\(s\\), 0 RU, \\d+ ms$`,
        ),
      ),
      // ord-done and the ord-err every test starts with, both last changed at T0.
      `finished/min    0 · 0 · 2 · 0 · 0 (oldest first, to ${at}; 0/s over the last minute)`,
      "breakers        all closed",
      "",
    ]);
    out = "";
    expect(await run("stats", "--json")).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      oldestPending: { orderId: "ord-expired", ageMs: 125_000 },
      messages: { parked: { count: 1, capped: false }, countedUpTo: 1_000 },
      lastScan: { holder: "embedded-supervisor", found: { resets: 1 } },
      throughput: { finishedPerMinute: [0, 0, 2, 0, 0] },
    });
  });

  it("sends --key as the function key header", async () => {
    await run("show", "ord-err", "--key", "k-123");
    expect(requests[0]?.headers.get("x-functions-key")).toBe("k-123");
  });

  it("refuses a command line it cannot run, before calling the host", async () => {
    await expect(run("resubmit", "ord-err", "--reason", "x")).rejects.toThrow(UsageError);
    await expect(run("delete", "ord-err")).rejects.toThrow(
      /one of list, show, history, resubmit, compensate/,
    );
    await expect(run("show")).rejects.toThrow(/needs one order id/);
    await expect(run("list", "ord-err")).rejects.toThrow(/takes no order id/);
    await expect(run("show", "ord-err", "--state", "Error")).rejects.toThrow(/are for sas orders list/);
    await expect(
      ordersCommand(["show", "o", "--url", "ftp://x"], { fetch, out: () => {}, err: () => {} }),
    ).rejects.toThrow(/--url must be an http/);
    expect(requests).toEqual([]);
  });

  it("exits 1 naming the host when it cannot be reached", async () => {
    const code = await ordersCommand(["show", "o", "--url", "http://127.0.0.1:9"], {
      fetch,
      out: () => {},
      err: (text) => {
        err += text;
      },
    });
    expect(code).toBe(1);
    expect(err).toContain("cannot reach http://127.0.0.1:9");
  });
});
