import { describe, expect, it } from "vitest";
import {
  AGENT_MESSAGE_SCHEMA_VERSION,
  parseAgentRequest,
  parseAgentResponse,
} from "../../src/domain/agent-messages.js";
import { validate } from "../../src/domain/validation.js";
import { ORDER_ACTIVITIES } from "../../src/orchestrators/order-contracts.js";
import { FIXTURE_AGENT_MODES, readDurableFixture } from "../support/durable-fixtures.js";

type Json = Record<string, unknown>;

const AGENT_ACTIVITIES = new Set([ORDER_ACTIVITIES.callAgent.name, ORDER_ACTIVITIES.sendAgentRequest.name]);

/**
 * Agent messages as the version-1 build wrote them, taken from the runs it recorded
 * (test/fixtures/durable-v1-*.json): each Agent activity's input and result in the durable histories,
 * and the requests and replies left on the queues.
 */
function recordedV1Messages() {
  const requests: Json[] = [];
  const responses: Json[] = [];
  for (const mode of FIXTURE_AGENT_MODES) {
    const { tables } = readDurableFixture(mode);
    // A task's completion may be in a later episode than its scheduling: ids are per instance.
    const events = (tables.df_history ?? []).flatMap((row) =>
      (JSON.parse(String(row.events)) as Json[]).map((event) => ({ instance: row.instance_id, event })),
    );
    const calls = new Set<string>();
    for (const { instance, event } of events) {
      if (!AGENT_ACTIVITIES.has(String(event.Name))) continue;
      requests.push(JSON.parse(String(event.Input)));
      if (event.Name === ORDER_ACTIVITIES.callAgent.name) calls.add(`${instance}#${event.EventId}`);
    }
    for (const { instance, event } of events) {
      if (calls.has(`${instance}#${event.TaskScheduledId}`) && typeof event.Result === "string") {
        responses.push(JSON.parse(event.Result));
      }
    }
    for (const row of tables.queue_messages ?? []) {
      if (row.queue === "agent-requests") requests.push(JSON.parse(String(row.body)));
      if (row.queue === "agent-responses") responses.push(JSON.parse(String(row.body)));
    }
  }
  return { requests, responses };
}

const { requests, responses } = recordedV1Messages();

describe("Agent messages of the previous schema version", () => {
  it("are version 1 as recorded: requests carrying the partner's payload, undos among them", () => {
    expect(requests.length).toBeGreaterThan(50);
    expect(responses.length).toBeGreaterThan(20);
    expect(new Set([...requests, ...responses].map((m) => m.schemaVersion))).toEqual(new Set([1]));
    expect(requests.some((r) => r.operation === "undo")).toBe(true);
    expect(JSON.stringify(requests)).toContain('"customerId":"cust-1"');
  });

  it("upgrade on read: a request keeps its fields and the reference to undo, and drops the payload", () => {
    for (const v1 of requests) {
      const { payload, ...fields } = v1 as Json & { payload: Json };
      const expected = {
        ...fields,
        schemaVersion: AGENT_MESSAGE_SCHEMA_VERSION,
        reference: v1.operation === "undo" ? payload.reference : null,
      };
      const parsed = parseAgentRequest(v1);
      expect(parsed.ok && parsed.value).toEqual(expected);
      // The same request reaching the Agent's activity as its input, from an older history.
      const input = validate("input", ORDER_ACTIVITIES.callAgent.input, v1);
      expect(input.ok && input.value).toEqual(expected);
    }
    const undos = requests.filter((r) => r.operation === "undo");
    expect(undos.every((r) => typeof (r.payload as Json).reference === "string")).toBe(true);
  });

  it("upgrade on read: a reply changes only its version", () => {
    for (const v1 of responses) {
      const parsed = parseAgentResponse(v1);
      expect(parsed.ok && parsed.value).toEqual({ ...v1, schemaVersion: AGENT_MESSAGE_SCHEMA_VERSION });
    }
  });

  it("are refused, saying which, when no upgrade reaches their version or a later release wrote them", () => {
    const [request] = requests;
    const [response] = responses;
    for (const [parse, message] of [
      [parseAgentRequest, request],
      [parseAgentResponse, response],
    ] as const) {
      const newer = parse({ ...message, schemaVersion: 3 });
      expect(!newer.ok && newer.error.message).toMatch(
        /schemaVersion: is 3, newer than the 2 this deployment reads: written by a later version of the app/,
      );
      const older = parse({ ...message, schemaVersion: 0 });
      expect(!older.ok && older.error.message).toMatch(/is 0, older than the 2 this deployment reads/);
    }
    expect(validate("input", ORDER_ACTIVITIES.callAgent.input, { ...request, schemaVersion: 3 }).ok).toBe(
      false,
    );
  });
});
