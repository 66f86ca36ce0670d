import { afterEach, describe, expect, it } from "vitest";
import { addMilliseconds } from "../../src/domain/time.js";
import { FUNCTION_NAMES } from "../../src/functions/function-names.js";
import type { DurableClient, OrchestrationStatus } from "../../src/ports/durable-client.js";
import { updateAsRead } from "../../src/state/record-updates.js";
import { AppUnderTest } from "../support/azure-app-under-test.js";
import { pendingRecord } from "../support/records.js";

let app: AppUnderTest | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const T0 = "2026-01-01T00:00:00.000Z";

/** Orders mid-step in attempt 1 with a deadline 30 s after T0; the clock then 2 minutes on. */
async function expiredAttempts(under: AppUnderTest, ...orderIds: string[]) {
  for (const orderId of orderIds) {
    const created = await under.states.createIfAbsent(pendingRecord(orderId));
    if (!created.created) throw new Error(`${orderId} seeded twice`);
    const owned = await updateAsRead(under.states, created.record, "starter", [
      { type: "claim", now: T0, attemptTimeoutMs: 30_000 },
      {
        type: "startStep",
        instanceId: `${orderId}:1`,
        step: "reserveInventory",
        now: T0,
        completeBy: addMilliseconds(T0, 30_000),
        requestedCalls: 3,
        amplification: 1,
      },
    ]);
    if (!owned.ok) throw new Error(`${orderId} not owned`);
  }
  await under.clock.advance(120_000);
}

async function recordOf(under: AppUnderTest, orderId: string) {
  const record = await under.states.get(orderId);
  if (!record) throw new Error(`${orderId} is missing`);
  return record;
}

describe("F24-9: the Supervisor's timer in Azure judges with its own invocation's durable client", () => {
  it("without a durable client binding, says so and leaves every expired attempt uncharged", async () => {
    app = new AppUnderTest({}, { durableClient: null });
    await app.open();
    await expiredAttempts(app, "ord-1");
    const before = await recordOf(app, "ord-1");

    await expect(app.invoke(FUNCTION_NAMES.supervisor, {})).resolves.toBeUndefined();

    expect(await recordOf(app, "ord-1")).toEqual(before);
    expect(app.logger.events("supervisor.durable-client.missing")).toHaveLength(1);
    expect(app.logger.events("supervisor.recovery.unjudged")).toEqual([
      expect.objectContaining({ orderId: "ord-1", attempt: 1 }),
    ]);
  });

  it("a run that overlaps another asks with its own client to the end, never with none", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked = 0;
    let firstAsked: () => void = () => undefined;
    const waiting = new Promise<void>((resolve) => {
      firstAsked = resolve;
    });
    // Every orchestration is still running; the first question waits until the test lets it go.
    const running = (runtime: DurableClient): DurableClient =>
      Object.assign(Object.create(runtime) as DurableClient, {
        getStatus: async (instanceId: string): Promise<OrchestrationStatus> => {
          if (++asked === 1) {
            firstAsked();
            await gate;
          }
          return {
            instanceId,
            name: "orderProcessingV4",
            runtimeStatus: "Running",
            input: null,
            output: null,
            customStatus: null,
            failure: undefined,
            createdTime: new Date(T0),
            lastUpdatedTime: new Date(T0),
          };
        },
      });
    app = new AppUnderTest({}, { durableClient: running });
    await app.open();
    await expiredAttempts(app, "ord-a", "ord-b");

    const first = app.invoke(FUNCTION_NAMES.supervisor, {});
    await waiting;
    // A second tick while the first scans: the lease is held, so it scans nothing, and ends first.
    await app.invoke(FUNCTION_NAMES.supervisor, {});
    release();
    await first;

    // Both were still running, so both got their deadline again; neither was charged.
    for (const orderId of ["ord-a", "ord-b"]) {
      expect(await recordOf(app, orderId)).toMatchObject({
        processState: "Processing",
        failureCount: 0,
        hostInterruptions: 1,
      });
    }
  });
});
