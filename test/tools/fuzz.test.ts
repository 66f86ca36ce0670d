/**
 * `npm run fuzz`: every property holds on the product as it is, with a few runs and a fixed seed, and
 * each one fails, with a shrunk counterexample, when a fault is planted where it checks.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAgentResponse } from "../../src/domain/agent-messages.js";
import { withoutStoreMetadata } from "../../src/domain/state-record.js";
import { replyEventName, type StepName } from "../../src/domain/workflow.js";
import { createOrderActivities } from "../../src/orchestrators/order-activities.js";
import { ORDER_ACTIVITIES } from "../../src/orchestrators/order-contracts.js";
import { COMPLETE, type MessageHandler } from "../../src/ports/message-handler.js";
import { createSubmissionHandler } from "../../src/scheduler/submission.js";
import type { ActivityHandler, HandlerSource } from "../../tools/fuzz/activities/activity-harness.js";
import { activityTarget } from "../../tools/fuzz/activities/activity-target.js";
import { ACTIVITY_SHAPES } from "../../tools/fuzz/activities/shapes.js";
import { parseFuzzOptions, UsageError } from "../../tools/fuzz/options.js";
import type { SubmissionFactory } from "../../tools/fuzz/orders/embedded.js";
import { isJsonObject } from "../../tools/fuzz/orders/json-object.js";
import { applyMutation } from "../../tools/fuzz/orders/mutations.js";
import { sqliteQueueTarget } from "../../tools/fuzz/orders/sqlite-queue-target.js";
import type { ReplyHandlerFactory } from "../../tools/fuzz/replies/reply-pipeline.js";
import { replyTarget } from "../../tools/fuzz/replies/reply-target.js";
import { formatReport } from "../../tools/fuzz/report.js";
import { runFuzz } from "../../tools/fuzz/run-fuzz.js";
import { type Fuzzable, fuzzable, type TargetReport } from "../../tools/fuzz/run-target.js";
import { allTargets } from "../../tools/fuzz/targets.js";
import { orderMessage } from "../pipeline/pipeline-harness.js";

const SEED = 20260101;

async function violationOf(target: Fuzzable, runs = 300): Promise<TargetReport> {
  const report = await target.fuzz({ runs, seed: SEED });
  expect(report.violations, JSON.stringify(report)).toBe(1);
  expect(report.counterexample?.path).toMatch(/^\d+(:\d+)*$/);
  return report;
}

describe("npm run fuzz", () => {
  it("finds no violation in the product, in every target", { timeout: 20_000 }, async () => {
    const report = await runFuzz(allTargets(), { runs: 25, seed: SEED });
    expect(report.targets.map((t) => [t.target, t.violations, t.counterexample])).toEqual(
      report.targets.map((t) => [t.target, 0, null]),
    );
    expect(report.ok).toBe(true);
    for (const target of report.targets) {
      expect(target.runs, target.target).toBe(25);
      expect(target.cases, target.target).toBeGreaterThan(25);
    }
    const orders = report.targets.find((t) => t.target === "orders: SQLite queue");
    expect(orders?.accepted).toBeGreaterThan(0);
    expect(orders?.deadLettered).toBeGreaterThan(0);
  });
});

describe("the order mutations", () => {
  it("name an extra item field as it is spelled, even one that looks like a replacement pattern", () => {
    const order = orderMessage("A");
    for (const key of ["$& ", "$1", "$$", "note"]) {
      const { body, field } = applyMutation(order, { kind: "extra", item: 0, key, value: 1 });
      expect(field).toBe(`items[0].${key}`);
      expect(Object.keys((body.items as Record<string, unknown>[])[0] ?? {})).toContain(key);
    }
  });
});

describe("npm run fuzz, with an order-message fault planted", () => {
  it("reports a submission handler that overwrites the record of an order it already holds", async () => {
    const overwriting: SubmissionFactory = (deps) => {
      const real = createSubmissionHandler(deps);
      return async (message) => {
        const orderId = isJsonObject(message.body) ? message.body.orderId : undefined;
        const existing = typeof orderId === "string" ? await deps.states.get(orderId) : undefined;
        if (existing) await deps.states.replace(withoutStoreMetadata(existing), existing._etag);
        return real(message);
      };
    };
    const report = await violationOf(fuzzable(sqliteQueueTarget({ submission: overwriting })));
    expect(report.counterexample?.violation).toMatch(/wrote \[\{"table":"state_records"/);
  });

  it("reports a submission handler that accepts a message with an unknown field", async () => {
    const lenient: SubmissionFactory = (deps) => {
      const real: MessageHandler = createSubmissionHandler(deps);
      const known = ["schemaVersion", "orderId", "customerId", "currency", "items", "replyTo"];
      return (message) => {
        const body = message.body;
        if (!isJsonObject(body)) return real(message);
        const kept = Object.fromEntries(Object.entries(body).filter(([key]) => known.includes(key)));
        return real({ ...message, body: kept });
      };
    };
    // Over HTTP the API refuses such a message before it reaches the queue; on the queue it gets through.
    const report = await violationOf(fuzzable(sqliteQueueTarget({ submission: lenient })));
    // The handler drops the field that makes the message invalid: an unknown one, or an oversized padding.
    expect(report.counterexample?.value).toMatch(/"kind":"(extra|huge)"/);
    expect(report.counterexample?.failsAlone).toBe(true);
  });
});

describe("npm run fuzz, with a reply or activity fault planted", () => {
  it("reports a reply handler that hands any reply to the instance it names", async () => {
    const trusting: ReplyHandlerFactory = () => async (message, durable) => {
      const reply = isJsonObject(message.body) ? message.body : {};
      const { instanceId, step, operation } = reply;
      if (typeof instanceId === "string" && typeof step === "string") {
        const event = replyEventName(step as StepName, operation === "undo" ? "undo" : "do");
        await durable.raiseEvent(instanceId, event, reply);
      }
      return COMPLETE;
    };
    const report = await violationOf(fuzzable(replyTarget({ replies: trusting })));
    expect(report.counterexample?.violation).toMatch(/^Violation: reply \d+ \(\w+\): /);
  });

  it("reports a reply handler that refuses what it should but never hands a reply on", async () => {
    const swallowing: ReplyHandlerFactory =
      ({ logger }) =>
      async (message) => {
        const parsed = parseAgentResponse(message.body);
        if (!parsed.ok) return { action: "deadLetter", reason: "Invalid", description: parsed.error.message };
        logger.info("agent.reply.delivered", { instanceId: parsed.value.instanceId });
        return COMPLETE;
      };
    const report = await violationOf(fuzzable(replyTarget({ replies: swallowing })));
    expect(report.counterexample?.violation).toMatch(
      /a genuine success for .+ left the step "Running", not Completed/,
    );
  });

  it("describes the input of every order activity, so each one's boundary is fuzzed", () => {
    expect(Object.keys(ACTIVITY_SHAPES).sort()).toEqual(
      Object.values(ORDER_ACTIVITIES)
        .map((contract) => contract.name)
        .sort(),
    );
  });

  it("reports activities registered without their input contracts", async () => {
    const unchecked: HandlerSource = async (deps) => {
      const implementations = createOrderActivities(deps) as unknown as Record<
        string,
        (input: unknown, invocation: unknown) => Promise<unknown>
      >;
      const handlers = new Map<string, ActivityHandler>();
      for (const [key, contract] of Object.entries(ORDER_ACTIVITIES)) {
        const implementation = implementations[key];
        if (implementation) handlers.set(contract.name, (input) => implementation(input, {}));
      }
      return handlers;
    };
    const report = await violationOf(fuzzable(activityTarget({ handlers: unchecked })));
    expect(report.counterexample?.violation).toMatch(/input 1 \(broken \w+\): a broken input \(.+\)/);
  });
});

describe("npm run fuzz's command line", () => {
  const random = () => 77;

  it("takes --runs, --seed and --json, with a random seed by default", () => {
    expect(parseFuzzOptions([], random)).toEqual({ runs: 1_000, seed: 77, json: false });
    expect(parseFuzzOptions(["--runs", "5", "--seed", "-3", "--json"], random)).toEqual({
      runs: 5,
      seed: -3,
      json: true,
    });
  });

  it("refuses what it does not know, naming it", () => {
    for (const args of [["--runs"], ["--runs", "0"], ["--runs", "1.5"], ["--seed", "x"], ["--verbose"]]) {
      expect(() => parseFuzzOptions(args, random), args.join(" ")).toThrow(UsageError);
    }
  });

  it("prints its usage and exits 2 on a bad flag", () => {
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "../../tools/fuzz/fuzz.ts"), "--runs", "many"],
      { encoding: "utf8" },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--runs must be an integer from 1 to 1000000; got "many"');
    expect(run.stderr).toContain("usage: npm run fuzz -- [--runs <n>] [--seed <n>] [--json]");
  });

  it("prints each target's figures, and a violation's counterexample with how to replay it", () => {
    const target = (name: string, violations: number): TargetReport => ({
      target: name,
      runs: 10,
      cases: 30,
      accepted: 10,
      refused: 8,
      deadLettered: 7,
      dropped: 5,
      violations,
      durationMs: 5,
      counterexample:
        violations === 0
          ? null
          : {
              value: '{"orders":[]}',
              violation: "Violation: it broke",
              path: "3:1",
              shrinks: 2,
              failsAlone: true,
            },
    });
    const text = formatReport({
      seed: 9,
      runs: 10,
      durationMs: 1_234,
      ok: false,
      targets: [target("a", 0), target("b", 1)],
    });
    expect(text).toContain("VIOLATION in b (after 10 runs, shrunk 2 times):");
    expect(text).toContain('counterexample: {"orders":[]}');
    expect(text).toContain("fails on its own, on a fresh session");
    expect(text).toContain("replay: npm run fuzz -- --seed 9 --runs 10 (fast-check path 3:1)");
    expect(text).toMatch(/^a +30 +10 +8 +7 +5 +0 +0\.0$/m);
    expect(text).toContain("FAILED in 1.2 s");
  });
});
