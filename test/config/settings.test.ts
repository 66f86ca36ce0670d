import { describe, expect, it } from "vitest";
import { INTEGER_SETTINGS, loadPipelineSettings, SettingsError } from "../../src/config/settings.js";

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadPipelineSettings(env);
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  throw new Error("expected the settings to be refused");
}

describe("pipeline settings", () => {
  it("defaults every setting, and the defaults hold together", () => {
    const settings = loadPipelineSettings({});
    expect(settings.stepTimeoutMs).toBe(INTEGER_SETTINGS.stepTimeoutMs.defaultValue);
    expect(settings.recovery.maxRecoveries).toBe(INTEGER_SETTINGS.maxRecoveries.defaultValue);
    expect(settings.agentMode).toBe("activity");
    expect(loadPipelineSettings({ AGENT_MODE: "queue" }).agentMode).toBe("queue");
  });

  it("reads values by their setting names", () => {
    const settings = loadPipelineSettings({
      MAX_IN_FLIGHT: "7",
      STEP_TIMEOUT_MS: "1000",
      MAX_RECOVERIES: "2",
    });
    expect(settings).toMatchObject({ maxInFlight: 7, stepTimeoutMs: 1_000, recovery: { maxRecoveries: 2 } });
  });

  it("sets aside the worst case of compensation as the undo reserve, in either Agent form", () => {
    // The most steps any workflow version has (4), undone, plus one in-doubt step resolved first.
    expect(loadPipelineSettings({}).undoReservePerOrder).toBe(5 * 6 * 3);
    const queued = loadPipelineSettings({ AGENT_MODE: "queue", AGENT_REQUEST_MAX_DELIVERIES: "2" });
    expect(queued.undoReservePerOrder).toBe(5 * 6 * 3 * 2);
  });

  it("chooses what happens past the recovery limit, and refuses anything else", () => {
    expect(loadPipelineSettings({}).recovery.onExhausted).toBe("error");
    expect(loadPipelineSettings({ ON_RECOVERIES_EXHAUSTED: "compensate" }).recovery.onExhausted).toBe(
      "compensate",
    );
    expect(problems({ ON_RECOVERIES_EXHAUSTED: "retry" })).toEqual([
      'ON_RECOVERIES_EXHAUSTED="retry": must be error or compensate',
    ]);
  });

  it("F24-4: lets an order wait 10 minutes for an open breaker unless told, and names a bad MAX_DEFERRAL_MS", () => {
    expect(loadPipelineSettings({}).maxDeferralMs).toBe(600_000);
    expect(loadPipelineSettings({ MAX_DEFERRAL_MS: "0" }).maxDeferralMs).toBe(0);
    expect(problems({ MAX_DEFERRAL_MS: "-1" })).toEqual([
      'MAX_DEFERRAL_MS="-1": must be an integer from 0 to 604800000',
    ]);
    expect(problems({ MAX_DEFERRAL_MS: "ten minutes" })[0]).toMatch(/^MAX_DEFERRAL_MS=/);
  });

  it("keeps finished records 30 days unless told, and refuses 0 (there is no keeping forever)", () => {
    expect(loadPipelineSettings({}).retentionDays).toBe(30);
    expect(loadPipelineSettings({ RETENTION_DAYS: "15" }).retentionDays).toBe(15);
    expect(loadPipelineSettings({ RETENTION_DAYS: "3650" }).retentionDays).toBe(3_650);
    for (const bad of ["0", "14", "3651", "7.5", "a month"]) {
      expect(problems({ RETENTION_DAYS: bad })).toEqual([
        `RETENTION_DAYS=${JSON.stringify(bad)}: must be an integer from 15 to 3650`,
      ]);
    }
  });

  it("keeps records longer than any queue keeps a message, so no redelivery reaches a deleted record", async () => {
    const { readFileSync } = await import("node:fs");
    const queues = JSON.parse(
      readFileSync(new URL("../../infra/queues.json", import.meta.url), "utf8"),
    ) as Record<string, { defaultMessageTimeToLive: string }>;
    const days = Object.values(queues).map((q) =>
      Number(/^P(\d+)D$/.exec(q.defaultMessageTimeToLive)?.[1] ?? Number.NaN),
    );
    expect(days.length).toBeGreaterThan(0);
    for (const ttl of days) expect(INTEGER_SETTINGS.retentionDays.min).toBeGreaterThan(ttl);
  });

  it("refuses a Supervisor lease that is not whole seconds", () => {
    expect(problems({ SUPERVISOR_LEASE_MS: "15500" })).toEqual([
      "SUPERVISOR_LEASE_MS=15500: must be whole seconds, as blob leases are",
    ]);
  });

  it("names every bad setting and its rule", () => {
    expect(problems({ MAX_IN_FLIGHT: "lots", STEP_TIMEOUT_MS: "-5", AGENT_MODE: "fax" })).toEqual([
      'STEP_TIMEOUT_MS="-5": must be an integer from 100 to 3600000',
      'MAX_IN_FLIGHT="lots": must be an integer from 1 to 100000',
      'AGENT_MODE="fax": must be activity or queue',
    ]);
  });

  it("refuses step deadlines that cannot fit in the attempt's", () => {
    expect(problems({ ATTEMPT_TIMEOUT_MS: "5000", STEP_TIMEOUT_MS: "2000" })[0]).toMatch(
      /must fit in ATTEMPT_TIMEOUT_MS/,
    );
  });

  it("refuses retry layers whose worst case exceeds the end-to-end budget", () => {
    const [problem] = problems({ RETRY_BUDGET_PER_ORDER: "50" });
    // 4 steps (the longest version), 4 undos and one in-doubt step resolved before its undo:
    // 9 requests x 6 attempts x 3 calls.
    expect(problem).toMatch(/^RETRY_BUDGET_PER_ORDER: retry layers allow 162 partner calls per order/);
    expect(problems({ AGENT_MODE: "queue", AGENT_REQUEST_MAX_DELIVERIES: "10" })[0]).toMatch(
      /deliveriesPerRequest=10/,
    );
  });
});

describe("queue names", () => {
  it("are the queues an order's replyTo may not name, apart from the status queues", async () => {
    const { QUEUE_NAMES } = await import("../../src/config/names.js");
    const { PIPELINE_QUEUES } = await import("../../src/domain/order.js");
    const statusQueues: string[] = [QUEUE_NAMES.orderStatus, QUEUE_NAMES.storefrontStatus];
    const own = Object.values(QUEUE_NAMES).filter((name) => !statusQueues.includes(name));
    expect([...PIPELINE_QUEUES].sort()).toEqual([...own].sort());
  });

  it("takes an optional partner access key, never echoing it in a refusal", () => {
    expect(loadPipelineSettings({})).not.toHaveProperty("partnerAccessKey");
    expect(loadPipelineSettings({ PARTNER_ACCESS_KEY: "k-123_ABC.~" }).partnerAccessKey).toBe("k-123_ABC.~");
    expect(loadPipelineSettings({ PARTNER_ACCESS_KEY: "  " })).not.toHaveProperty("partnerAccessKey");
    const spaced = problems({ PARTNER_ACCESS_KEY: "two words" });
    expect(spaced).toEqual([expect.stringMatching(/^PARTNER_ACCESS_KEY: must be 1 to 512 printable ASCII/)]);
    expect(spaced.join()).not.toContain("two words");
    expect(problems({ PARTNER_ACCESS_KEY: "@Microsoft.KeyVault(SecretUri=https://kv/secrets/k)" })).toEqual([
      expect.stringMatching(/^PARTNER_ACCESS_KEY: an unresolved Key Vault reference/),
    ]);
  });
});
