import { describe, expect, it } from "vitest";
import { parseAgentRequest, parseAgentResponse } from "../../src/domain/agent-messages.js";
import { parseStateRecord } from "../../src/domain/state-record-check.js";
import { parseStatusMessage, statusMessageId } from "../../src/domain/status-message.js";
import { pendingRecord } from "../support/records.js";

const request = {
  schemaVersion: 2,
  requestId: "ord-1:1:chargePayment",
  orderId: "ord-1",
  attempt: 1,
  step: "chargePayment",
  operation: "do",
  idempotencyKey: "ord-1:chargePayment",
  instanceId: "ord-1:1",
  replyEvent: "reply-chargePayment",
  completeBy: "2026-01-01T00:00:30.000Z",
  maxCalls: 3,
  reference: null,
};
const response = {
  schemaVersion: 2,
  requestId: "ord-1:1:chargePayment",
  orderId: "ord-1",
  attempt: 1,
  step: "chargePayment",
  operation: "do",
  instanceId: "ord-1:1",
  outcome: "succeeded",
  reference: "pay-77",
  fault: null,
  callsMade: 2,
  completedAt: "2026-01-01T00:00:03.000Z",
};

function fieldsOf(result: { ok: boolean; error?: { issues: readonly { field: string; rule: string }[] } }) {
  expect(result.ok).toBe(false);
  return result.error?.issues.map((i) => `${i.field}/${i.rule}`) ?? [];
}

describe("agent messages", () => {
  it("accept well-formed requests and responses", () => {
    expect(parseAgentRequest(request).ok).toBe(true);
    expect(parseAgentResponse(response).ok).toBe(true);
    const failed = {
      ...response,
      outcome: "failed",
      reference: null,
      fault: { kind: "permanent", code: "Declined", message: "no" },
    };
    expect(parseAgentResponse(failed).ok).toBe(true);
  });

  it("name the field and rule of each violation", () => {
    expect(fieldsOf(parseAgentRequest({ ...request, step: "teleport", maxCalls: 0, extra: 1 }))).toEqual(
      expect.arrayContaining(["step/oneOf", "maxCalls/min", "extra/unknownField"]),
    );
    expect(fieldsOf(parseAgentRequest({ ...request, completeBy: "tomorrow" }))).toEqual([
      "completeBy/format",
    ]);
    for (const impossible of [
      "2026-13-01T00:00:00.000Z",
      "2026-02-30T00:00:00.000Z",
      "2026-01-01T24:00:00.000Z",
    ]) {
      expect(fieldsOf(parseAgentResponse({ ...response, completedAt: impossible }))).toEqual([
        "completedAt/custom",
      ]);
    }
    expect(fieldsOf(parseAgentResponse({ ...response, outcome: "failed" }))).toEqual(["fault/custom"]);
    expect(
      fieldsOf(parseAgentResponse({ ...response, fault: { kind: "odd", code: "", message: "" } })),
    ).toEqual(expect.arrayContaining(["fault.kind/oneOf", "fault.code/min"]));
  });

  it("refuse a response whose ids disagree: another order, attempt, step or operation than its instance and request", () => {
    expect(fieldsOf(parseAgentResponse({ ...response, orderId: "ord-2" }))).toEqual([
      "instanceId/custom",
      "requestId/custom",
    ]);
    expect(fieldsOf(parseAgentResponse({ ...response, attempt: 2 }))).toEqual([
      "instanceId/custom",
      "requestId/custom",
    ]);
    expect(fieldsOf(parseAgentResponse({ ...response, step: "arrangeShipment" }))).toEqual([
      "requestId/custom",
    ]);
    expect(fieldsOf(parseAgentResponse({ ...response, operation: "undo" }))).toEqual(["requestId/custom"]);
    const undo = { ...response, operation: "undo", requestId: "ord-1:1:chargePayment:undo" };
    expect(parseAgentResponse(undo).ok).toBe(true);
  });
});

describe("status messages", () => {
  const status = {
    schemaVersion: 1,
    orderId: "ord-1",
    status: "completed",
    attempt: 2,
    at: "2026-01-01T00:00:00.000Z",
    detail: null,
  };

  it("validate and carry a stable id per order, attempt and status", () => {
    const parsed = parseStatusMessage(status);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(statusMessageId(parsed.value)).toBe("ord-1:2:completed");
    expect(fieldsOf(parseStatusMessage({ ...status, status: "done" }))).toEqual(["status/oneOf"]);
    expect(fieldsOf(parseStatusMessage({ ...status, orderId: undefined }))).toEqual(["orderId/required"]);
  });
});

describe("a contract written under another schema version", () => {
  it("is refused for its version alone, before its fields are judged, whatever else it holds", () => {
    // A later version's record: renamed and new fields that this version would report as a list of
    // violations hiding the cause, or misread.
    const { processState: _, ...rest } = pendingRecord();
    const later = { ...rest, schemaVersion: 4, state: "Pending", tenant: "t-1" };
    const refused = parseStateRecord(later);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error.issues).toEqual([
      {
        field: "schemaVersion",
        rule: "newerVersion",
        message:
          "is 4, newer than the 3 this deployment reads: written by a later version of the app, which is the one to read it",
      },
    ]);
    expect(refused.error.message).toBe(
      "invalid state record: schemaVersion: is 4, newer than the 3 this deployment reads: written by a later version of the app, which is the one to read it",
    );
    for (const parse of [parseAgentRequest, parseAgentResponse, parseStatusMessage]) {
      expect(fieldsOf(parse({ schemaVersion: 7, anything: true }))).toEqual(["schemaVersion/newerVersion"]);
    }
  });
});

describe("state records", () => {
  it("round-trip through JSON and reject records from an unknown schema", () => {
    const record = pendingRecord();
    expect(parseStateRecord(JSON.parse(JSON.stringify(record)))).toEqual({ ok: true, value: record });
    expect(fieldsOf(parseStateRecord({ ...record, schemaVersion: 4 }))).toEqual([
      "schemaVersion/newerVersion",
    ]);
    expect(fieldsOf(parseStateRecord({ ...record, processState: "Done" }))).toEqual(["processState/oneOf"]);
    const badStep = { ...record, steps: [{ ...record.steps[0], status: "Sleeping" }] };
    expect(fieldsOf(parseStateRecord(badStep))).toEqual(["steps[0].status/oneOf"]);
  });
});
