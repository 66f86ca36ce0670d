/**
 * `sas partner status | faults | outage` against a running embedded host, as `sas start` runs it: the
 * simulated partner on its own thread with an access key new at this start, the pipeline's Agents
 * sending it, and the host's API on real time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../laptop/cli/main.js";
import { type EmbeddedStack, startEmbeddedStack } from "../../laptop/embedded/embedded-stack.js";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import { localKeys } from "../../laptop/embedded/key-file.js";
import type { PartnerControlState } from "../../partner/control-contract.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import type { ProcessState } from "../../src/domain/state-record.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import { orderMessage } from "../pipeline/pipeline-harness.js";
import { captureOutput } from "../support/captured-output.js";

const TOKEN = "partner-cli-api-token";
const NO_FAULTS = { transient: 0, permanent: 0, slow: 0, lostReply: 0 };
const output = captureOutput();

describe("sas partner against a running host", () => {
  const db = openDatabase(":memory:");
  let stack: EmbeddedStack;
  let api: HttpApi;
  let partnerUrl: string;
  let accessKey: string;

  beforeAll(async () => {
    stack = await startEmbeddedStack({
      db,
      logger: new MemoryLogger("warn"),
      faults: NO_FAULTS,
      duplicateReplies: 0,
      seed: 3,
      agent: "activity",
      // An order held by the outage keeps being recovered, rather than given up on, until it is over;
      // an attempt the outage failed is handed back within seconds.
      env: {
        MAX_RECOVERIES: "100",
        RETRY_BUDGET_PER_ORDER: "100000",
        STEP_TIMEOUT_MS: "2000",
        ATTEMPT_TIMEOUT_MS: "8000",
      },
      keyRing: localKeys({}, ":memory:", new Date()).ring,
    });
    api = await startHttpApi({
      port: 0,
      logger: new MemoryLogger("warn"),
      backend: stack.pipeline.apiBackend(),
      partner: stack.partnerControls,
      apiToken: TOKEN,
    });
    partnerUrl = stack.partner?.url ?? "";
    accessKey = stack.settings.partnerAccessKey ?? "";
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    db.close();
  });

  /** `sas <argv> --url <host>`: its exit status and what it printed. */
  async function sas(...argv: string[]) {
    const from = { out: output.stdout.length, err: output.stderr.length };
    const code = await main([...argv, "--url", api.url]);
    return { code, stdout: output.stdout.slice(from.out), stderr: output.stderr.slice(from.err) };
  }

  async function partnerControlState(): Promise<PartnerControlState> {
    const response = await fetch(`${partnerUrl}/control`, { headers: { "x-partner-key": accessKey } });
    expect(response.status).toBe(200);
    return (await response.json()) as PartnerControlState;
  }

  function callPartner(headers: Record<string, string>) {
    return fetch(`${partnerUrl}/operations/reserveInventory`, {
      method: "POST",
      headers: { "idempotency-key": `k-${Math.random()}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ orderId: "ord-outsider", items: [] }),
    });
  }

  async function processState(orderId: string): Promise<ProcessState | undefined> {
    return (await stack.pipeline.states.get(orderId))?.processState;
  }

  it("refuses a caller without the key, or with another, while the pipeline's Agents, with it, succeed", async () => {
    expect(accessKey).toMatch(/^[\w-]{43}$/);
    const missing = await callPartner({});
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ error: "unauthenticated" });
    expect((await callPartner({ "x-partner-key": "not-the-key" })).status).toBe(403);
    expect((await fetch(`${partnerUrl}/control`)).status).toBe(401);
    expect((await fetch(`${partnerUrl}/health`)).status).toBe(200);

    await stack.pipeline.post(orderMessage("ord-keyed") as unknown as JsonValue);
    await expect.poll(() => processState("ord-keyed"), { timeout: 15_000, interval: 50 }).toBe("Processed");
  });

  it("changes the partner's rates with sas partner faults, which sas partner status and the partner's journal show", async () => {
    const refused = await sas("partner", "faults", "--transient", "0.5");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("401 unauthorized");

    const set = await sas("partner", "faults", "--transient", "0.5", "--token", TOKEN);
    expect(set).toMatchObject({ code: 0, stderr: "" });
    expect(set.stdout).toContain("faults   transient 0.5 · permanent 0 · slow 0 · lost reply 0");

    const status = await sas("partner", "status");
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("faults   transient 0.5 · permanent 0 · slow 0 · lost reply 0");
    expect(status.stdout).toMatch(
      /faults: transient 0\.5 · permanent 0 · slow 0 · lost reply 0 {2}\(by operator\)\n$/,
    );

    const state = await partnerControlState();
    expect(state.faults).toEqual({ ...NO_FAULTS, transient: 0.5 });
    expect(state.changes.at(-1)).toMatchObject({
      change: "faults",
      by: "operator",
      faults: { ...NO_FAULTS, transient: 0.5 },
    });
    const json = await sas("partner", "status", "--json");
    expect(JSON.parse(json.stdout)).toEqual(state);

    expect((await sas("partner", "faults", "--transient", "0", "--token", TOKEN)).code).toBe(0);
    expect((await partnerControlState()).faults).toEqual(NO_FAULTS);
  });

  it("takes the partner down with sas partner outage: an order submitted meanwhile completes only once it is ended", {
    timeout: 60_000,
  }, async () => {
    const down = await sas("partner", "outage", "--seconds", "30", "--token", TOKEN);
    expect(down).toMatchObject({ code: 0, stderr: "" });
    expect(down.stdout).toMatch(/^outage {3}until \S+ \(since \S+\)$/m);
    const refused = await callPartner({ "x-partner-key": accessKey });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: "outage" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const ledger = async () => {
      if (!stack.partner) throw new Error("the stack runs no partner of its own");
      return stack.partner.ledger();
    };
    const refusedBefore = (await ledger()).outageRefusals;
    await stack.pipeline.post(orderMessage("ord-held") as unknown as JsonValue);
    // The Agent's calls for the order are refused: nothing applied, the order not finished.
    await expect
      .poll(async () => (await ledger()).outageRefusals, { timeout: 15_000, interval: 50 })
      .toBeGreaterThan(refusedBefore);
    expect((await ledger()).effectsByOrder["ord-held"]).toBeUndefined();
    expect(await processState("ord-held")).not.toBe("Processed");

    const up = await sas("partner", "outage", "--end", "--token", TOKEN);
    expect(up).toMatchObject({ code: 0, stderr: "" });
    expect(up.stdout).toContain("outage   none");
    await expect.poll(() => processState("ord-held"), { timeout: 40_000, interval: 50 }).toBe("Processed");

    const changes = (await partnerControlState()).changes.slice(-2);
    expect(changes).toMatchObject([
      { change: "outage", by: "operator" },
      { change: "recovered", by: "operator" },
    ]);
  });
});
