/**
 * The state container, defined once: `ensureStateContainer` creates it from this for local emulators,
 * and the Bicep in `infra/` must declare the same (a test compares the two).
 *
 * Indexing is opt-in: only the paths the queries filter or sort on are indexed, so a write of the
 * steps, compensation log and errors costs no index maintenance. The composite indexes match the
 * ORDER BY clauses of `CosmosStateStore` exactly, path for path and order for order, as Cosmos DB
 * requires for a multi-property ORDER BY.
 */
export const ORDER_STATE_CONTAINER = {
  defaultDatabaseName: "orders",
  id: "orderState",
  partitionKey: { paths: ["/orderId"], kind: "Hash", version: 2 },
  indexingPolicy: {
    indexingMode: "consistent",
    automatic: true,
    includedPaths: [
      { path: "/processState/?" },
      { path: "/lockedBy/?" },
      { path: "/notBefore/?" },
      { path: "/completeBy/?" },
      { path: "/orderId/?" },
    ],
    excludedPaths: [{ path: "/*" }],
    compositeIndexes: [
      // Claimable: two states match (Pending, and compensations handed back), so the due time leads.
      [
        { path: "/notBefore", order: "ascending" },
        { path: "/orderId", order: "ascending" },
      ],
      // Expired: two states match, so the deadline must lead for "oldest deadline first" across both.
      [
        { path: "/completeBy", order: "ascending" },
        { path: "/orderId", order: "ascending" },
      ],
    ],
  },
} as const;
