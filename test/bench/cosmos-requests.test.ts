import { describe, expect, it } from "vitest";
import { documentWriteUnits, pointReadUnits, requestUnits } from "../../bench/cosmos-cost.js";
import { type CosmosExchange, CosmosTally, classifyRequest, labelOf } from "../../bench/cosmos-requests.js";

const DOCS = "/dbs/orders/colls/orderState/docs";

describe("a Cosmos DB REST call, classified", () => {
  it.each([
    ["GET", `${DOCS}/o-1`, {}, { operation: "read", container: "orderState", documentId: "o-1" }],
    ["PUT", `${DOCS}/o-1`, {}, { operation: "replace", container: "orderState", documentId: "o-1" }],
    ["PATCH", `${DOCS}/o-1`, {}, { operation: "patch", container: "orderState", documentId: "o-1" }],
    ["DELETE", `${DOCS}/o-1`, {}, { operation: "delete", container: "orderState", documentId: "o-1" }],
    ["POST", DOCS, {}, { operation: "create", container: "orderState" }],
    ["POST", DOCS, { "x-ms-documentdb-is-upsert": "True" }, { operation: "upsert", container: "orderState" }],
    ["POST", DOCS, { "x-ms-documentdb-isquery": "true" }, { operation: "query", container: "orderState" }],
    [
      "POST",
      DOCS,
      { "content-type": "application/query+json" },
      { operation: "query", container: "orderState" },
    ],
    [
      "POST",
      DOCS,
      { "x-ms-cosmos-is-batch-request": "true" },
      { operation: "batch", container: "orderState" },
    ],
    ["GET", DOCS, {}, { operation: "readFeed", container: "orderState" }],
    // The SDK sends some paths with a doubled slash, and encodes ids.
    [
      "GET",
      "//dbs/orders/colls/orderRecovery/docs/o%3A1",
      {},
      { operation: "read", container: "orderRecovery", documentId: "o:1" },
    ],
    ["POST", "/dbs/orders/colls", {}, { operation: "createContainer" }],
    ["GET", "/dbs/orders/colls/orderState", {}, { operation: "metadata", container: "orderState" }],
    ["GET", "/dbs/orders/colls/orderState/pkranges", {}, { operation: "metadata", container: "orderState" }],
    ["GET", "/", {}, { operation: "metadata" }],
  ])("%s %s %j", (method, url, headers, expected) => {
    expect(classifyRequest(method, url, headers)).toEqual(expected);
  });
});

describe("what a request worked on", () => {
  it("is its container, and in the state container the breakers' partition and the tombstones apart", () => {
    const read = (container: string, documentId: string) => ({
      operation: "read" as const,
      container,
      documentId,
    });
    expect(labelOf(read("orderState", "o-1"), '["o-1"]')).toBe("records");
    expect(labelOf(read("orderState", "breaker:chargePayment"), '["#breakers"]')).toBe("breakers");
    expect(labelOf({ operation: "query", container: "orderState" }, '["#breakers"]')).toBe("breakers");
    expect(labelOf(read("orderState", "retired:o-1"), '["o-1"]')).toBe("tombstones");
    expect(labelOf(read("orderRecovery", "o-1"), '["o-1"]')).toBe("recovery");
    expect(labelOf(read("leases", "l"), undefined)).toBe("other");
    expect(labelOf({ operation: "metadata" }, undefined)).toBe("");
  });
});

const POLICY = {
  includedPaths: [{ path: "/processState/?" }, { path: "/orderId/?" }],
  excludedPaths: [{ path: "/*" }],
};

function exchange(
  operation: CosmosExchange["target"]["operation"],
  over: Partial<CosmosExchange> & { container?: string; documentId?: string } = {},
): CosmosExchange {
  const { container = "orderState", documentId, ...rest } = over;
  return {
    target: { operation, container, ...(documentId ? { documentId } : {}) },
    partitionKey: '["o-1"]',
    status: 200,
    requestBody: "",
    responseBody: "",
    ...rest,
  };
}

const record = (processState: string, padding = 0) =>
  JSON.stringify({ id: "o-1", orderId: "o-1", processState, note: "x".repeat(padding) });

/** A tally that has seen the state container created with POLICY. */
function tally(): CosmosTally {
  const counted = new CosmosTally();
  counted.record(
    exchange("createContainer", {
      container: undefined,
      status: 201,
      requestBody: JSON.stringify({ id: "orderState", indexingPolicy: POLICY }),
    } as Partial<CosmosExchange>),
  );
  return counted;
}

describe("the Cosmos DB tally", () => {
  it("counts by container and kind, metadata apart at no charge, a refused request apart with its status", () => {
    const counted = tally();
    counted.record(exchange("create", { status: 201, requestBody: record("Pending") }));
    counted.record(
      exchange("replace", { documentId: "o-1", status: 412, requestBody: record("Processing") }),
    );
    counted.record(exchange("read", { container: "orderRecovery", documentId: "o-1", status: 404 }));
    counted.record(exchange("metadata", { container: "orderState" }));
    counted.record(exchange("read", { container: "leases", documentId: "l", responseBody: "{}" }));
    const counts = counted.counts();
    expect(counts.byKind).toEqual({
      metadata: 2,
      "records.create": 1,
      "records.replace.412": 1,
      "recovery.read.404": 1,
      "other.read": 1,
    });
    expect(counts.requests).toBe(6);
    expect(counts.requestUnitsByKind["records.replace.412"]).toBe(1);
    expect(counts.requestUnitsByKind.metadata).toBe(0);
  });

  it("prices a create by the container's policy, and a replace by the terms it changed, from the document it replaces", () => {
    const size = (text: string) => Buffer.byteLength(text);
    const counted = tally();
    counted.record(exchange("create", { status: 201, requestBody: record("Pending") }));
    const created = counted.counts().requestUnitsEstimate;
    // Two indexed values: orderId and processState.
    expect(created).toBeCloseTo(documentWriteUnits(size(record("Pending"))) + 0.4);
    counted.record(exchange("replace", { documentId: "o-1", requestBody: record("Pending", 3_000) }));
    const unindexedChange = counted.counts().requestUnitsEstimate - created;
    expect(unindexedChange).toBeCloseTo(
      documentWriteUnits(size(record("Pending"))) + documentWriteUnits(size(record("Pending", 3_000))),
    );
    counted.record(exchange("replace", { documentId: "o-1", requestBody: record("Processed", 3_000) }));
    const stateChange = counted.counts().requestUnitsEstimate - created - unindexedChange;
    expect(stateChange).toBeCloseTo(
      documentWriteUnits(size(record("Pending", 3_000))) +
        documentWriteUnits(size(record("Processed", 3_000))) +
        0.4,
    );
    expect(counted.counts().bytesWritten).toEqual({
      records: size(record("Pending")) + size(record("Pending", 3_000)) + size(record("Processed", 3_000)),
    });
  });

  it("prices an upsert answered 201 as a create and one answered 200 as a replace, a delete by what it deleted", () => {
    const counted = tally();
    counted.record(exchange("upsert", { status: 201, requestBody: record("Pending") }));
    const first = counted.counts().requestUnitsEstimate;
    expect(first).toBeCloseTo(requestUnits({ operation: "create", bytes: 60, indexedTerms: 2 }));
    counted.record(exchange("upsert", { status: 200, requestBody: record("Pending", 5_000) }));
    const second = counted.counts().requestUnitsEstimate - first;
    expect(second).toBeCloseTo(documentWriteUnits(60) + documentWriteUnits(5_060));
    counted.record(exchange("delete", { documentId: "o-1", status: 204 }));
    const deleted = counted.counts().requestUnitsEstimate - first - second;
    expect(deleted).toBeCloseTo(documentWriteUnits(5_060) + 0.4);
    expect(counted.counts().byKind).toMatchObject({ "records.upsert": 2, "records.delete": 1 });
  });

  it("prices a point read by the answer's size and a query by the items of its page", () => {
    const counted = tally();
    counted.record(exchange("read", { documentId: "o-1", responseBody: record("Pending", 4_000) }));
    const page = JSON.stringify({ _rid: "x", Documents: [{ a: 1 }, { b: "y".repeat(9_000) }], _count: 2 });
    counted.record(exchange("query", { responseBody: page }));
    const units = counted.counts().requestUnitsByKind;
    expect(units["records.read"]).toBeCloseTo(pointReadUnits(4_060));
    expect(units["records.query"]).toBeCloseTo(1.8 + 1 + pointReadUnits(9_008));
  });

  it("prices a transactional batch as its operations, and counts it as one request", () => {
    const counted = tally();
    const operations = [
      { operationType: "Replace", id: "o-1", resourceBody: JSON.parse(record("Processed")) },
      { operationType: "Create", resourceBody: { id: "tomb-o-1", orderId: "o-1" } },
    ];
    const results = [{ statusCode: 200 }, { statusCode: 201 }];
    counted.record(
      exchange("batch", { requestBody: JSON.stringify(operations), responseBody: JSON.stringify(results) }),
    );
    const counts = counted.counts();
    expect(counts.byKind).toEqual({ metadata: 1, "records.batch": 1 });
    // Neither document was seen before: both priced as creates, with their index terms.
    const replaced = requestUnits({ operation: "create", bytes: 62, indexedTerms: 2 });
    const tombstone = requestUnits({ operation: "create", bytes: 32, indexedTerms: 1 });
    expect(counts.requestUnitsEstimate).toBeCloseTo(replaced + tombstone);
  });
});
