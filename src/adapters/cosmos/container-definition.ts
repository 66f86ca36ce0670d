/**
 * The state container, defined once: `ensureStateContainers` creates it from this for local emulators,
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
  // Time to live on, with no expiry by default: only the documents the store gives a `ttl` (records in
  // `Processed` or `Compensated`, RETENTION_DAYS) expire, counted from their last write.
  defaultTtl: -1,
  indexingPolicy: {
    indexingMode: "consistent",
    automatic: true,
    includedPaths: [
      { path: "/processState/?" },
      { path: "/lockedBy/?" },
      { path: "/notBefore/?" },
      { path: "/completeBy/?" },
      { path: "/orderId/?" },
      { path: "/updatedAt/?" },
      { path: "/workflowVersion/?" },
    ],
    excludedPaths: [{ path: "/*" }],
    compositeIndexes: [
      // Claimable: two states match (Pending, and compensations handed back), so the due time leads.
      [
        { path: "/notBefore", order: "ascending" },
        { path: "/orderId", order: "ascending" },
      ],
      // The expired query of builds before the recovery index (docs/recovery-index.md); kept while a
      // rollback to one of them is possible, as that query is refused without it.
      [
        { path: "/completeBy", order: "ascending" },
        { path: "/orderId", order: "ascending" },
      ],
      // The operator's list: newest change first, in every state or in one.
      [
        { path: "/updatedAt", order: "descending" },
        { path: "/orderId", order: "descending" },
      ],
      // The operator's statistics: the finished records of a window (an equality filter, then a range
      // filter last).
      [
        { path: "/processState", order: "ascending" },
        { path: "/updatedAt", order: "ascending" },
      ],
      // The Pending record waiting longest by its progress (filtered on the state, which leads the ORDER BY
      // as Cosmos DB requires for a filter and an ORDER BY on different properties).
      [
        { path: "/processState", order: "ascending" },
        { path: "/progressAt", order: "ascending" },
      ],
    ],
  },
} as const;

/**
 * The Supervisor's recovery index (docs/recovery-index.md): one small entry per record that can expire,
 * `{ id: orderId, orderId, completeBy }`, in the database of the state container. It holds owned records
 * only, so its size follows the orders in flight, not the history, and the Supervisor's query reads it
 * instead of the state container. Partitioned like the records, by `/orderId`: every entry write is a
 * point write conditional on the entry's ETag, and the container stays small enough to be one physical
 * partition, which a query reads in one request. Only the deadline and its tie-break are indexed.
 */
export const ORDER_RECOVERY_CONTAINER = {
  defaultDatabaseName: ORDER_STATE_CONTAINER.defaultDatabaseName,
  id: "orderRecovery",
  partitionKey: { paths: ["/orderId"], kind: "Hash", version: 2 },
  indexingPolicy: {
    indexingMode: "consistent",
    automatic: true,
    includedPaths: [{ path: "/completeBy/?" }, { path: "/orderId/?" }],
    excludedPaths: [{ path: "/*" }],
    compositeIndexes: [
      [
        { path: "/completeBy", order: "ascending" },
        { path: "/orderId", order: "ascending" },
      ],
    ],
  },
} as const;
