import { describe, expect, it } from "vitest";
import {
  MAX_ORDER_MESSAGE_BYTES,
  type OrderMessage,
  orderDifferences,
  orderFromMessage,
  orderTotalMinor,
  parseOrderMessage,
} from "../../src/domain/order.js";
import type { ValidationIssue } from "../../src/domain/validation.js";

const valid: OrderMessage = {
  schemaVersion: 1,
  orderId: "ord-000123",
  customerId: "cust-42",
  currency: "EUR",
  items: [{ sku: "SKU-1", quantity: 2, unitPriceMinor: 1299 }],
  replyTo: "status-shop-web",
};

function issuesOf(input: unknown): ValidationIssue[] {
  const result = parseOrderMessage(input);
  if (result.ok) throw new Error("expected the message to be rejected");
  return [...result.error.issues];
}

function expectIssue(input: unknown, field: string, rule: string): ValidationIssue {
  const issues = issuesOf(input);
  const issue = issues.find((i) => i.field === field && i.rule === rule);
  expect(issue, `expected ${field}/${rule} among ${JSON.stringify(issues)}`).toBeDefined();
  return issue as ValidationIssue;
}

describe("parseOrderMessage", () => {
  it("accepts the contract's example as text, bytes and a decoded object", () => {
    const text = JSON.stringify(valid);
    for (const input of [text, new TextEncoder().encode(text), valid]) {
      const result = parseOrderMessage(input);
      expect(result).toEqual({ ok: true, value: valid });
    }
  });

  it("accepts a message without replyTo and with boundary values", () => {
    const { replyTo: _omit, ...rest } = valid;
    const boundary = {
      ...rest,
      orderId: "a".repeat(64),
      customerId: "A-z_0.9:x",
      items: Array.from({ length: 100 }, (_, i) => ({
        sku: `S${i}`,
        quantity: 1_000,
        unitPriceMinor: 100_000_000,
      })),
    };
    expect(parseOrderMessage(boundary).ok).toBe(true);
    expect(parseOrderMessage({ ...rest, items: [{ sku: "S", quantity: 1, unitPriceMinor: 0 }] }).ok).toBe(
      true,
    );
  });

  it.each([
    [{ ...valid, orderId: "" }, "orderId", "min", "1 to 64 characters"],
    [{ ...valid, orderId: "a".repeat(65) }, "orderId", "max", "1 to 64 characters"],
    [{ ...valid, orderId: "ord 1" }, "orderId", "format", "letters, digits"],
    [{ ...valid, customerId: "cust/42" }, "customerId", "format", "letters, digits"],
    [{ ...valid, currency: "eur" }, "currency", "format", "three capital letters"],
    [{ ...valid, currency: "EURO" }, "currency", "max", "3 to 3 characters"],
    [{ ...valid, schemaVersion: 2 }, "schemaVersion", "newerVersion", "is 2, newer than the 1"],
    [{ ...valid, schemaVersion: 0 }, "schemaVersion", "olderVersion", "is 0, older than the 1"],
    [{ ...valid, schemaVersion: "1" }, "schemaVersion", "oneOf", "must be 1"],
    [{ ...valid, items: [] }, "items", "min", "1 to 100 items"],
    [
      { ...valid, items: Array.from({ length: 101 }, () => valid.items[0]) },
      "items",
      "max",
      "1 to 100 items",
    ],
    [
      { ...valid, items: [{ sku: "S", quantity: 0, unitPriceMinor: 1 }] },
      "items[0].quantity",
      "min",
      "1 to 1,000",
    ],
    [
      { ...valid, items: [{ sku: "S", quantity: 1001, unitPriceMinor: 1 }] },
      "items[0].quantity",
      "max",
      "1 to 1,000",
    ],
    [
      { ...valid, items: [{ sku: "S", quantity: 1.5, unitPriceMinor: 1 }] },
      "items[0].quantity",
      "type",
      "integer",
    ],
    [
      { ...valid, items: [{ sku: "S", quantity: 1, unitPriceMinor: 12.99 }] },
      "items[0].unitPriceMinor",
      "type",
      "integer",
    ],
    [
      { ...valid, items: [{ sku: "S", quantity: 1, unitPriceMinor: 100_000_001 }] },
      "items[0].unitPriceMinor",
      "max",
      "0 to 100,000,000",
    ],
    [
      { ...valid, items: [{ sku: "S", quantity: 1, unitPriceMinor: -1 }] },
      "items[0].unitPriceMinor",
      "min",
      "0 to",
    ],
    [{ ...valid, items: [{ sku: "", quantity: 1, unitPriceMinor: 1 }] }, "items[0].sku", "min", "1 to 64"],
    [{ ...valid, replyTo: "" }, "replyTo", "min", "characters"],
    [{ ...valid, replyTo: "bad queue!" }, "replyTo", "format", "queue name"],
    [{ ...valid, replyTo: "orders" }, "replyTo", "reserved", "the pipeline's own queues"],
    [{ ...valid, replyTo: "Agent-Responses" }, "replyTo", "reserved", "agent-responses"],
    [{ ...valid, customerId: 42 }, "customerId", "type", "must be a string"],
    [{ ...valid, items: "SKU-1" }, "items", "type", "must be an array"],
  ])("names the field and rule: %#", (input, field, rule, wording) => {
    expect(expectIssue(input, field, rule).message).toContain(wording);
  });

  it("names every missing field as required", () => {
    const issues = issuesOf({});
    for (const field of ["schemaVersion", "orderId", "customerId", "currency", "items"]) {
      expect(issues).toContainEqual(
        expect.objectContaining({ field, rule: "required", message: "is required" }),
      );
    }
    expect(issues.map((i) => i.field)).not.toContain("replyTo");
  });

  it("rejects unknown fields at every level, naming each", () => {
    const input = { ...valid, priority: "high", items: [{ ...valid.items[0], colour: "red" }] };
    expectIssue(input, "priority", "unknownField");
    expectIssue(input, "items[0].colour", "unknownField");
  });

  it("reports every violation, not just the first", () => {
    const issues = issuesOf({ ...valid, orderId: "", currency: "x", items: [] });
    expect(issues.map((i) => i.field)).toEqual(expect.arrayContaining(["orderId", "currency", "items"]));
  });

  it("rejects a message over 64 KiB before parsing it", () => {
    const padding = "x".repeat(MAX_ORDER_MESSAGE_BYTES);
    const huge = `{"orderId":"${padding}"`; // not even valid JSON: size is checked first
    const issue = expectIssue(huge, "(message)", "maxBytes");
    expect(issue.message).toContain(`limit is ${MAX_ORDER_MESSAGE_BYTES} bytes`);
    expectIssue({ ...valid, customerId: padding }, "(message)", "maxBytes");
  });

  it("counts bytes, not characters", () => {
    const multiByte = "é".repeat(MAX_ORDER_MESSAGE_BYTES / 2); // 2 bytes each
    expectIssue(JSON.stringify({ ...valid, customerId: multiByte }), "(message)", "maxBytes");
  });

  it("refuses a decoded value nested too deep for JSON.stringify, naming where, instead of throwing", () => {
    const deep = JSON.parse(`${"[".repeat(20_000)}${"]".repeat(20_000)}`) as unknown;
    expectIssue({ ...valid, nested: deep }, "nested", "unknownField");
    expectIssue(deep, "(message)", "type");
  });

  it("measures a decoded value however deep it is nested: past 64 KiB it is refused for its size", () => {
    const depth = 40_000; // 80,000 bytes of brackets: deeper than JSON.stringify goes, larger than the limit
    const deep = JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`) as unknown;
    const issue = expectIssue({ ...valid, nested: deep }, "(message)", "maxBytes");
    expect(issue.message).toContain(`limit is ${MAX_ORDER_MESSAGE_BYTES} bytes`);
  });

  it("measures a decoded value exactly as JSON.stringify would write it", () => {
    const fits = {
      ...valid,
      customerId: "é".repeat(100),
      note: [1.5, -0, null, true, 'a"b'],
      when: new Date(0),
    };
    const size = new TextEncoder().encode(JSON.stringify(fits)).byteLength;
    const padded = { ...fits, pad: "x".repeat(MAX_ORDER_MESSAGE_BYTES - size - 9) }; // ,"pad":"…" adds 9 + n
    expect(new TextEncoder().encode(JSON.stringify(padded)).byteLength).toBe(MAX_ORDER_MESSAGE_BYTES);
    expectIssue(padded, "note", "unknownField");
    expectIssue({ ...padded, pad: `${padded.pad}x` }, "(message)", "maxBytes");
  });

  it("rejects malformed JSON and non-objects with a clear reason", () => {
    expect(expectIssue("{not json", "(message)", "json").message).toContain("not valid JSON");
    expectIssue("[1,2]", "(message)", "type");
    expectIssue("null", "(message)", "type");
  });

  it("puts the field and rule in the error message", () => {
    const result = parseOrderMessage({ ...valid, currency: "eu" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(/^invalid order message: currency: /);
  });
});

describe("orders", () => {
  const order = orderFromMessage(valid);

  it("totals in integer minor units", () => {
    expect(orderTotalMinor({ ...order, items: [{ sku: "A", quantity: 3, unitPriceMinor: 1299 }] })).toBe(
      3897,
    );
    const largest = Array.from({ length: 100 }, () => ({
      sku: "A",
      quantity: 1000,
      unitPriceMinor: 100_000_000,
    }));
    expect(orderTotalMinor({ ...order, items: largest })).toBe(10_000_000_000_000);
  });

  it("finds no difference between duplicates and names each differing field of a conflict", () => {
    expect(orderDifferences(order, orderFromMessage({ ...valid, replyTo: "other" }))).toEqual([]);
    const conflicting = orderFromMessage({
      ...valid,
      customerId: "cust-43",
      items: [
        { sku: "SKU-1", quantity: 3, unitPriceMinor: 1299 },
        { sku: "SKU-2", quantity: 1, unitPriceMinor: 1 },
      ],
    });
    expect(orderDifferences(order, conflicting)).toEqual(["customerId", "items.length", "items[0].quantity"]);
  });
});
