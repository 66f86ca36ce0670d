import {
  BulkOperationType,
  type Container,
  type ItemDefinition,
  type JSONObject,
  type OperationInput,
  type OperationResponse,
} from "@azure/cosmos";
import { retiredOrderSchema } from "../../domain/retired-order.js";
import type { ProcessState, StateRecord } from "../../domain/state-record.js";
import type { IsoInstant } from "../../domain/time.js";
import { validate } from "../../domain/validation.js";
import type { RetiredOrder } from "../../ports/state-store.js";
import type { Meter } from "./query-all.js";
import type { StateDocument } from "./state-document.js";

/**
 * Tombstones on Cosmos DB. The time to live deletes a retired record with no hook, so the tombstone is
 * written with the write that retires the record (the one that gives it a `ttl`), in the same
 * transactional batch: the record's own write first, then the tombstone, so a write that fails writes
 * neither, and one that succeeds writes both. It lives in the record's partition, in the state container,
 * under an id no record can have in that partition (a record's id is its `orderId`), and it has no
 * `ttl`, so it stays when the record expires (the container's default is -1, never).
 *
 * A tombstone is never a record: it has none of the fields the queries of records filter or sort on
 * (`processState`, `lockedBy`, `notBefore`, `completeBy`, `updatedAt`, `workflowVersion`), so none of
 * them matches it, and records are read by id = `orderId`. Only its `orderId`, the partition key, is
 * indexed.
 */
export interface TombstoneDocument extends ItemDefinition {
  readonly id: string;
  readonly orderId: string;
  readonly finalState: ProcessState;
  readonly attempt: number;
  readonly retiredAt: IsoInstant;
  readonly purgedAt: IsoInstant | null;
  /** The order's `replyTo` (F24-8); absent from a tombstone written before tombstones kept it. */
  readonly replyTo?: string | null;
}

/** The tombstone's id, in the order's partition beside its record. */
export function tombstoneId(orderId: string): string {
  return `retired:${orderId}`;
}

/** The tombstone of `record` as written now: its state, attempt and last change. */
export function tombstoneOf(record: StateRecord, purgedAt: IsoInstant | null): TombstoneDocument {
  return {
    id: tombstoneId(record.orderId),
    orderId: record.orderId,
    finalState: record.processState,
    attempt: record.attempt,
    retiredAt: record.updatedAt,
    purgedAt,
    replyTo: record.replyTo,
  };
}

/** The order's tombstone, or undefined: one point read. */
export async function readTombstone(
  container: Container,
  orderId: string,
): Promise<RetiredOrder | undefined> {
  const { resource } = await container.item(tombstoneId(orderId), orderId).read<Record<string, unknown>>();
  if (resource === undefined) return undefined;
  const { finalState, attempt, retiredAt, purgedAt, replyTo } = resource;
  const tombstone = validate(`tombstone document ${tombstoneId(orderId)}`, retiredOrderSchema, {
    orderId,
    finalState,
    attempt,
    retiredAt,
    purgedAt: purgedAt ?? null,
    ...("replyTo" in resource ? { replyTo } : {}),
  });
  if (!tombstone.ok) throw tombstone.error;
  return tombstone.value;
}

/** A record write the tombstone goes with: its create, or its replace on the ETag read. */
export type RecordWrite =
  | { readonly kind: "create" }
  | { readonly kind: "replace"; readonly ifMatch: string };

/**
 * Writes a record that may expire (it has a `ttl`) and its tombstone in one transactional batch. Answers
 * as a point write does: the record as written and the charge, or an error with the record's status
 * (`code`: 409, 412, 404, ...) and the charge, which `statusOf` and `chargeOf` read.
 */
export async function writeWithTombstone(
  container: Container,
  document: StateDocument,
  write: RecordWrite,
): Promise<{ resource: unknown; requestCharge: number }> {
  const partitionKey = document.orderId;
  const resourceBody = document as unknown as JSONObject;
  const record: OperationInput =
    write.kind === "create"
      ? { operationType: BulkOperationType.Create, partitionKey, resourceBody }
      : {
          operationType: BulkOperationType.Replace,
          partitionKey,
          id: document.id,
          ifMatch: write.ifMatch,
          resourceBody,
        };
  const tombstone: OperationInput = {
    operationType: BulkOperationType.Upsert,
    partitionKey,
    resourceBody: tombstoneOf(document, null) as unknown as JSONObject,
  };
  const response = await container.items.batch([record, tombstone], partitionKey);
  const results: OperationResponse[] = response.result ?? [];
  const requestCharge = results.reduce((sum, result) => sum + (result.requestCharge ?? 0), 0);
  const [ofRecord, ofTombstone] = results;
  const written = (result: OperationResponse | undefined) => result !== undefined && result.statusCode < 300;
  if (!ofRecord || !written(ofRecord) || !written(ofTombstone)) {
    // The record's status says why: a tombstone fails only with it (424, not run), or for a cause that
    // fails the whole batch, which is then reported with the record's 424.
    const code = ofRecord?.statusCode ?? response.code;
    throw Object.assign(new Error(`state record ${document.orderId}: batch write failed with ${code}`), {
      code,
      requestCharge,
    });
  }
  return { resource: ofRecord.resourceBody, requestCharge };
}

/** Writes the order's tombstone alone (retention's delete, which comes after it). */
export async function upsertTombstone(
  container: Container,
  record: StateRecord,
  purgedAt: IsoInstant,
  meter: Meter,
): Promise<void> {
  const response = await container.items.upsert(tombstoneOf(record, purgedAt));
  meter.requestUnits += response.requestCharge;
}
