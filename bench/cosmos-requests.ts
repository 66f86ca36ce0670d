/**
 * Cosmos DB requests as the bench counts them: each request classified from its REST call (method,
 * path and headers), then tallied by container and kind, with the request units Cosmos DB would
 * charge for it (bench/cosmos-cost.ts) and the bytes of every document written. Pure: the stand-in
 * that sees the requests is bench/cosmos-counter.ts.
 */
import { requestUnits } from "./cosmos-cost.js";
import { type IndexingPolicy, indexTerms, termChanges } from "./cosmos-indexing.js";

export type CosmosOperation =
  | "read"
  | "create"
  | "upsert"
  | "replace"
  | "patch"
  | "delete"
  | "query"
  | "readFeed"
  | "batch"
  | "createContainer"
  | "metadata";

export interface CosmosTarget {
  readonly operation: CosmosOperation;
  /** The container's id, for a request on a container or its documents. */
  readonly container?: string;
  readonly documentId?: string;
}

type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

const isTrue = (headers: Headers, name: string) => String(headers[name]).toLowerCase() === "true";

/** What a REST call to Cosmos DB does, from its method, path and headers (as the service routes it). */
export function classifyRequest(method: string, url: string, headers: Headers): CosmosTarget {
  // Not `new URL`: the SDK sends some paths with a doubled slash, which a URL reads as a host.
  const path = decodeURIComponent(url.split("?")[0] ?? "").replace(/^\/+|\/+$/g, "");
  const parts = path.split("/");
  const container = parts[0] === "dbs" && parts[2] === "colls" ? parts[3] : undefined;
  const onDocuments = container !== undefined && parts[4] === "docs";
  if (!onDocuments) {
    const creates = method === "POST" && parts.length === 3 && parts[2] === "colls" && !isQuery(headers);
    return { operation: creates ? "createContainer" : "metadata", ...(container ? { container } : {}) };
  }
  const documentId = parts[5];
  if (documentId !== undefined) {
    const byMethod: Record<string, CosmosOperation> = {
      GET: "read",
      PUT: "replace",
      PATCH: "patch",
      DELETE: "delete",
    };
    return { operation: byMethod[method] ?? "metadata", container, documentId };
  }
  if (method === "GET") return { operation: "readFeed", container };
  if (method !== "POST") return { operation: "metadata", container };
  if (isQuery(headers)) return { operation: "query", container };
  if (isTrue(headers, "x-ms-documentdb-is-upsert")) return { operation: "upsert", container };
  if (isTrue(headers, "x-ms-cosmos-is-batch-request")) return { operation: "batch", container };
  return { operation: "create", container };
}

function isQuery(headers: Headers): boolean {
  return isTrue(headers, "x-ms-documentdb-isquery") || headers["content-type"] === "application/query+json";
}

/** One request and its answer, as the stand-in saw them. */
export interface CosmosExchange {
  readonly target: CosmosTarget;
  /** The partition key header, as sent (`["order-1"]`), or undefined. */
  readonly partitionKey?: string;
  readonly status: number;
  readonly requestBody: string;
  readonly responseBody: string;
}

export interface CosmosCounts {
  /**
   * Requests by `<container>.<operation>`, a refused one with its status (`records.replace.412`); the
   * state container's breakers and tombstones under their own names (`breakers.read.404`).
   */
  readonly byKind: Readonly<Record<string, number>>;
  readonly requests: number;
  /** The request units Cosmos DB would charge, by the published cost model: an estimate. */
  readonly requestUnitsEstimate: number;
  readonly requestUnitsByKind: Readonly<Record<string, number>>;
  /** Bytes of the documents written (created, replaced, upserted, patched), by container. */
  readonly bytesWritten: Readonly<Record<string, number>>;
}

/** What the bench calls each container in its counts; others go by "other". */
export const CONTAINER_LABELS: Readonly<Record<string, string>> = {
  orderState: "records",
  orderRecovery: "recovery",
};

/**
 * The documents the state container holds beside the records, counted apart: the circuit breakers,
 * in a partition of their own, and the tombstones of retired orders, under an id no record has.
 */
const BREAKER_PARTITION_KEY = '["#breakers"]';
const TOMBSTONE_ID = /^retired:/;

/** The label of what a request worked on: its container's, or the state container's breakers or tombstones. */
export function labelOf(
  target: CosmosTarget,
  partitionKey: string | undefined,
  labels: Readonly<Record<string, string>> = CONTAINER_LABELS,
): string {
  if (target.container === undefined) return "";
  const label = labels[target.container] ?? "other";
  if (label !== "records") return label;
  if (partitionKey === BREAKER_PARTITION_KEY) return "breakers";
  return target.documentId !== undefined && TOMBSTONE_ID.test(target.documentId) ? "tombstones" : label;
}

interface StoredDocument {
  readonly bytes: number;
  readonly terms: ReadonlySet<string>;
}

const KB = 1024;

/** Counts what the stand-in answers; keeps each container's indexing policy and each document's terms. */
export class CosmosTally {
  private readonly byKind = new Map<string, number>();
  private readonly unitsByKind = new Map<string, number>();
  private readonly bytesWritten = new Map<string, number>();
  private readonly policies = new Map<string, IndexingPolicy>();
  private readonly documents = new Map<string, StoredDocument>();
  private requests = 0;

  constructor(private readonly labels: Readonly<Record<string, string>> = CONTAINER_LABELS) {}

  record(exchange: CosmosExchange): void {
    const { target, status } = exchange;
    const label = labelOf(target, exchange.partitionKey, this.labels);
    const refused = status >= 400;
    const kind = isMetadata(target.operation)
      ? "metadata"
      : `${label}.${target.operation}${refused ? `.${status}` : ""}`;
    if (target.operation === "createContainer" && !refused) this.learnPolicy(exchange.requestBody);
    const units = refused ? requestUnits({ operation: "refused" }) : this.unitsOf(exchange, label);
    this.requests++;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
    this.unitsByKind.set(kind, (this.unitsByKind.get(kind) ?? 0) + units);
  }

  counts(): CosmosCounts {
    const units = [...this.unitsByKind.values()].reduce((sum, value) => sum + value, 0);
    return {
      byKind: Object.fromEntries(this.byKind),
      requests: this.requests,
      requestUnitsEstimate: units,
      requestUnitsByKind: Object.fromEntries(this.unitsByKind),
      bytesWritten: Object.fromEntries(this.bytesWritten),
    };
  }

  private learnPolicy(body: string): void {
    const container = parse(body) as { id?: string; indexingPolicy?: IndexingPolicy } | undefined;
    if (container?.id) this.policies.set(container.id, container.indexingPolicy ?? {});
  }

  private unitsOf(exchange: CosmosExchange, label: string): number {
    const { target } = exchange;
    switch (target.operation) {
      case "read":
        return requestUnits({ operation: "read", bytes: byteLength(exchange.responseBody) });
      case "query":
      case "readFeed":
        return requestUnits({ operation: "query", itemBytes: itemSizes(exchange.responseBody) });
      case "batch":
        return this.batchUnits(exchange, label);
      case "create":
      case "upsert":
      case "replace":
      case "patch":
      case "delete":
        return this.writeUnits(exchange, label);
      default:
        return requestUnits({ operation: "metadata" });
    }
  }

  /** A document written or deleted: priced with its index terms, and remembered for the next write. */
  private writeUnits(exchange: CosmosExchange, label: string, operation = exchange.target.operation): number {
    const { target, status } = exchange;
    const sent = parse(exchange.requestBody) as { id?: string; operations?: unknown[] } | undefined;
    const id = target.documentId ?? sent?.id ?? "";
    const key = `${target.container}/${exchange.partitionKey ?? ""}/${id}`;
    const before = this.documents.get(key);
    if (operation === "delete") {
      this.documents.delete(key);
      return requestUnits({
        operation: "delete",
        bytes: before?.bytes ?? KB,
        indexedTerms: before?.terms.size ?? 0,
      });
    }
    // A patch sends operations; the document it made is the answer.
    const written = operation === "patch" ? exchange.responseBody : exchange.requestBody;
    const bytes = byteLength(written);
    const policy = target.container === undefined ? undefined : this.policies.get(target.container);
    const terms = indexTerms(parse(written), policy);
    this.documents.set(key, { bytes, terms });
    this.bytesWritten.set(label, (this.bytesWritten.get(label) ?? 0) + bytes);
    const changes = termChanges(before?.terms ?? new Set(), terms);
    if (operation === "patch") {
      const patchedProperties = sent?.operations?.length ?? 1;
      return requestUnits({ operation: "patch", bytes, termChanges: changes, patchedProperties });
    }
    // An upsert answered 201 created the document; 200, it replaced one.
    if (operation === "create" || (operation === "upsert" && status === 201) || !before) {
      return requestUnits({ operation: "create", bytes, indexedTerms: terms.size });
    }
    return requestUnits({ operation: "replace", previousBytes: before.bytes, bytes, termChanges: changes });
  }

  /** A transactional batch: each of its operations priced as the single request it stands for. */
  private batchUnits(exchange: CosmosExchange, label: string): number {
    const operations = parse(exchange.requestBody);
    const results = parse(exchange.responseBody);
    if (!Array.isArray(operations)) return requestUnits({ operation: "refused" });
    return operations.reduce((sum: number, raw: unknown, i: number) => {
      const op = raw as { operationType?: string; id?: string; resourceBody?: unknown };
      const status = (Array.isArray(results) ? (results[i] as { statusCode?: number }) : undefined)
        ?.statusCode;
      const operation = BATCH_OPERATIONS[String(op.operationType).toLowerCase()];
      if (status === undefined || status >= 400 || operation === undefined) {
        return sum + (status === 424 ? 0 : requestUnits({ operation: "refused" }));
      }
      if (operation === "read") return sum + requestUnits({ operation: "read", bytes: KB });
      const body = JSON.stringify(op.resourceBody ?? {});
      const single: CosmosExchange = {
        ...exchange,
        target: { ...exchange.target, operation, ...(op.id ? { documentId: op.id } : {}) },
        status,
        requestBody: body,
        responseBody: body,
      };
      return sum + this.writeUnits(single, label, operation);
    }, 0);
  }
}

const BATCH_OPERATIONS: Readonly<Record<string, CosmosOperation>> = {
  create: "create",
  upsert: "upsert",
  replace: "replace",
  delete: "delete",
  patch: "patch",
  read: "read",
};

function isMetadata(operation: CosmosOperation): boolean {
  return operation === "metadata" || operation === "createContainer";
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The sizes of the items a query page returned: its array of documents (or values). */
function itemSizes(responseBody: string): number[] {
  const page = parse(responseBody);
  if (page === null || typeof page !== "object") return [];
  const items = Object.values(page).find(Array.isArray) as unknown[] | undefined;
  return (items ?? []).map((item) => byteLength(JSON.stringify(item)));
}
