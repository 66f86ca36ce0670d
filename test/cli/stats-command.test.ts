import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ordersCommand } from "../../laptop/cli/orders-command.js";
import { describeStats } from "../../laptop/cli/orders-output.js";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import type { BreakerView } from "../../src/domain/breaker-view.js";
import { type IdlePipeline, openIdlePipeline } from "../support/idle-pipeline.js";

const closed = (operation: string, failures = 0): BreakerView => ({
  operation,
  status: "closed",
  since: null,
  openedAt: null,
  nextProbeAt: null,
  opening: null,
  consecutiveFailures: failures,
  windowCalls: 10,
  windowFailures: failures,
});

const OPEN: BreakerView = {
  operation: "chargePayment",
  status: "open",
  since: "2026-01-01T00:00:04.000Z",
  openedAt: "2026-01-01T00:00:00.000Z",
  nextProbeAt: "2026-01-01T00:00:06.000Z",
  opening: null,
  consecutiveFailures: 0,
  windowCalls: 0,
  windowFailures: 0,
};

const HALF_OPEN: BreakerView = {
  operation: "refundPayment",
  status: "half-open",
  since: "2026-01-01T00:00:05.000Z",
  openedAt: "2026-01-01T00:00:01.000Z",
  nextProbeAt: "2026-01-01T00:00:20.000Z",
  opening: null,
  consecutiveFailures: 0,
  windowCalls: 0,
  windowFailures: 0,
};

describe("sas stats: the circuit breakers", () => {
  let idle: IdlePipeline;
  let api: HttpApi;
  let breakers: () => Promise<readonly BreakerView[]>;

  beforeEach(async () => {
    idle = await openIdlePipeline();
    const backend = idle.pipeline.apiBackend();
    // The host's breakers stand in here: the readings the stats route asks for them.
    const stats = { ...backend.stats, breakers: () => breakers() };
    api = await startHttpApi({ port: 0, logger: idle.logger, backend: { ...backend, stats } });
  });
  afterEach(async () => {
    await api.close();
    await idle.close();
  });

  async function statsLines(): Promise<string[]> {
    let out = "";
    const io = {
      fetch,
      out: (text: string) => {
        out += text;
      },
      err: () => undefined,
    };
    expect(await ordersCommand(["stats", "--url", api.url], io)).toBe(0);
    return out.split("\n");
  }

  it("prints one line per operation that is not closed, under one label, aligned with the other figures", async () => {
    breakers = async () => [closed("reserveInventory", 2), OPEN, closed("releaseInventory"), HALF_OPEN];
    const lines = await statsLines();
    expect(lines.slice(-3)).toEqual([
      "breakers        chargePayment open since 2026-01-01T00:00:00.000Z, no call before 2026-01-01T00:00:06.000Z",
      "                refundPayment half-open (open since 2026-01-01T00:00:01.000Z): one probe out, until 2026-01-01T00:00:20.000Z at the latest",
      "",
    ]);
    expect(lines[0]).toMatch(/^counts {10}Pending 0/);
  });

  it("F27-7: says which failures opened a breaker, when the host keeps them", async () => {
    const run = {
      cause: "run",
      consecutiveFailures: 5,
      windowCalls: 9,
      windowFailures: 6,
      windowMs: 30_000,
    } as const;
    const rate = {
      cause: "rate",
      consecutiveFailures: 1,
      windowCalls: 20,
      windowFailures: 11,
      windowMs: 30_000,
    } as const;
    breakers = async () => [
      { ...OPEN, opening: run },
      { ...HALF_OPEN, opening: rate },
    ];
    expect((await statsLines()).slice(-3)).toEqual([
      "breakers        chargePayment open since 2026-01-01T00:00:00.000Z (5 transient failures in a row), no call before 2026-01-01T00:00:06.000Z",
      "                refundPayment half-open (open since 2026-01-01T00:00:01.000Z, 11 of 20 calls failed transiently in 30 s): one probe out, until 2026-01-01T00:00:20.000Z at the latest",
      "",
    ]);
  });

  it("says when they are all closed, and when the host could not read them", async () => {
    breakers = async () => [closed("reserveInventory", 4), closed("chargePayment")];
    expect((await statsLines()).slice(-2)).toEqual(["breakers        all closed", ""]);

    breakers = () => Promise.reject(new Error("the breaker store is unreachable"));
    expect((await statsLines()).slice(-2)).toEqual([
      "breakers        unavailable (the host could not read it; see its log)",
      "",
    ]);
  });

  it("prints no breakers line for a host without breakers", () => {
    const text = describeStats({ counts: { Pending: 0 }, inFlight: { processing: 0, max: 1 } });
    expect(text).not.toContain("breakers");
  });
});
