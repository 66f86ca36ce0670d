import { describe, expect, it } from "vitest";
import { documentWriteUnits, pointReadUnits, QUERY_BASE_RU, requestUnits } from "../../bench/cosmos-cost.js";
import { indexTerms, termChanges } from "../../bench/cosmos-indexing.js";

const KB = 1024;

describe("the Cosmos DB request-unit estimate", () => {
  it("prices a point read by the item's size: 1 RU up to 1 KB, the published table above", () => {
    expect(pointReadUnits(200)).toBe(1);
    expect(pointReadUnits(KB)).toBe(1);
    expect(pointReadUnits(2 * KB)).toBeCloseTo(1.04);
    expect(pointReadUnits(128 * KB)).toBeCloseTo(9.95);
    // Between two sizes of the table, in proportion; past its last, pro rata.
    expect(pointReadUnits(3 * KB)).toBeCloseTo(1.09);
    expect(pointReadUnits(4096 * KB)).toBeCloseTo(583.6);
    expect(requestUnits({ operation: "read", bytes: 500 })).toBe(1);
  });

  it("matches the published worked examples for writes of a 1 KB document", () => {
    // A create with 10 indexed terms: 5.0 + 0.2 × 10 = 7 RU.
    expect(requestUnits({ operation: "create", bytes: KB, indexedTerms: 10 })).toBeCloseTo(6.95);
    // A replace changing two indexed terms (two removed, two added): 5.0 + 5.0 + 0.2 × 2 + 0.2 × 2 = 10.8 RU.
    expect(requestUnits({ operation: "replace", previousBytes: KB, bytes: KB, termChanges: 4 })).toBeCloseTo(
      10.7,
    );
    // A patch of the same, with two operations: 10.8 + 0.4 × 2 = 11.6 RU.
    expect(requestUnits({ operation: "patch", bytes: KB, termChanges: 4, patchedProperties: 2 })).toBeCloseTo(
      11.5,
    );
    // A delete with 10 indexed terms: 5.0 + 0.2 × 10 = 7 RU.
    expect(requestUnits({ operation: "delete", bytes: KB, indexedTerms: 10 })).toBeCloseTo(6.95);
  });

  it("charges writes more with size and with index terms, and a replace about twice a create", () => {
    expect(documentWriteUnits(16 * KB)).toBeCloseTo(9.52);
    expect(documentWriteUnits(8 * KB)).toBeGreaterThan(documentWriteUnits(4 * KB));
    const create = requestUnits({ operation: "create", bytes: 3 * KB, indexedTerms: 7 });
    expect(requestUnits({ operation: "create", bytes: 3 * KB, indexedTerms: 8 }) - create).toBeCloseTo(0.2);
    const replace = requestUnits({
      operation: "replace",
      previousBytes: 3 * KB,
      bytes: 3 * KB,
      termChanges: 0,
    });
    expect(replace).toBeCloseTo(2 * documentWriteUnits(3 * KB));
    // The document replaced is priced at its own size.
    expect(
      requestUnits({ operation: "replace", previousBytes: KB, bytes: 16 * KB, termChanges: 0 }),
    ).toBeCloseTo(4.95 + 9.52);
  });

  it("prices a query as a fixed charge and a point read of each item it returns, fitted to the published figures", () => {
    expect(requestUnits({ operation: "query", itemBytes: [] })).toBe(QUERY_BASE_RU);
    expect(requestUnits({ operation: "query", itemBytes: [300] })).toBeCloseTo(2.8);
    // The published sample: one item of 9,963 bytes for 3.19 RU.
    expect(requestUnits({ operation: "query", itemBytes: [9_963] })).toBeCloseTo(3.19, 1);
    // 1,000 items of 1 KB for about 1,000 RU.
    const thousand = requestUnits({ operation: "query", itemBytes: Array.from({ length: 1_000 }, () => KB) });
    expect(thousand).toBeGreaterThan(1_000);
    expect(thousand).toBeLessThan(1_005);
  });

  it("takes a refused request as a 1 KB point read, and a metadata request as nothing", () => {
    expect(requestUnits({ operation: "refused" })).toBe(1);
    expect(requestUnits({ operation: "metadata" })).toBe(0);
  });
});

describe("a document's index terms under its container's indexing policy", () => {
  /** Opt-in indexing as the state container has it: a few paths, one composite index. */
  const policy = {
    indexingMode: "consistent",
    includedPaths: [{ path: "/processState/?" }, { path: "/notBefore/?" }, { path: "/orderId/?" }],
    excludedPaths: [{ path: "/*" }],
    compositeIndexes: [
      [
        { path: "/notBefore", order: "ascending" },
        { path: "/orderId", order: "ascending" },
      ],
    ],
  };
  const record = {
    id: "o-1",
    orderId: "o-1",
    processState: "Pending",
    notBefore: "2030-01-01T00:00:00.000Z",
    steps: [{ name: "reserve", status: "done" }],
    _etag: '"0001"',
  };

  it("counts each indexed value, and a composite index whose paths the document all has", () => {
    expect([...indexTerms(record, policy)].sort()).toEqual([
      '/notBefore="2030-01-01T00:00:00.000Z"',
      '/orderId="o-1"',
      '/processState="Pending"',
      'composite 0="2030-01-01T00:00:00.000Z","o-1"',
    ]);
    const { notBefore: _, ...unscheduled } = record;
    expect(indexTerms(unscheduled, policy).size).toBe(2);
  });

  it("indexes every value of every path without a policy, arrays' elements each, system properties none", () => {
    const terms = indexTerms(record);
    expect(terms.size).toBe(6);
    expect(terms.has('/steps/[]/name="reserve"')).toBe(true);
    expect([...terms].some((term) => term.startsWith("/_etag"))).toBe(false);
    expect(indexTerms(record, { indexingMode: "none" }).size).toBe(0);
  });

  it("lets the more precise of an included and an excluded path decide", () => {
    const steps = {
      includedPaths: [{ path: "/*" }],
      excludedPaths: [{ path: "/steps/*" }, { path: "/orderId/?" }],
    };
    expect([...indexTerms(record, steps)].sort()).toEqual([
      '/id="o-1"',
      '/notBefore="2030-01-01T00:00:00.000Z"',
      '/processState="Pending"',
    ]);
  });

  it("finds what a replace removes and adds: two for a changed indexed value, none for an unindexed one", () => {
    const before = indexTerms(record, policy);
    expect(termChanges(before, indexTerms({ ...record, steps: [] }, policy))).toBe(0);
    expect(termChanges(before, indexTerms({ ...record, processState: "Processing" }, policy))).toBe(2);
    // A new deadline changes its own term and the composite index's.
    expect(
      termChanges(before, indexTerms({ ...record, notBefore: "2030-01-02T00:00:00.000Z" }, policy)),
    ).toBe(4);
    const { notBefore: _, ...unscheduled } = record;
    expect(termChanges(before, indexTerms(unscheduled, policy))).toBe(2);
  });
});
