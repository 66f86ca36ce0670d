import { applyTransition } from "../../src/domain/apply-transition.js";
import type { StateRecord, StoredStateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import type { Command } from "../../src/domain/transition-commands.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { T0 } from "../support/records.js";

/**
 * A state store under one of its ports' contracts. `Store` is `StateStore` and the port a suite exercises:
 * every suite arranges its records through `StateStore`, which every adapter implements beside the others.
 */
export interface StateStoreFixture<Store extends StateStore = StateStore> {
  readonly store: Store;
  /** The same store through a second client or connection, where the adapter has one. */
  readonly secondHandle?: () => Promise<StateStore>;
  dispose(): Promise<void>;
}

export const at = (ms: number) => addMilliseconds(T0, ms);

export function claimCommand(now = at(0)): Command {
  return { type: "claim", now, attemptTimeoutMs: 60_000 };
}

export function transition(
  record: StateRecord,
  command: Command,
  actor: "starter" | "supervisor" = "starter",
): StateRecord {
  const result = applyTransition(record, actor, command);
  if (!result.ok) throw result.error;
  return result.value.record;
}

export function withoutEtag(record: StoredStateRecord): StateRecord {
  const { _etag, ...rest } = record;
  void _etag;
  return rest;
}

/** Creates `record`, which must be new. */
export async function createNew(store: StateStore, record: StateRecord): Promise<StoredStateRecord> {
  const result = await store.createIfAbsent(record);
  if (!result.created) throw new Error(`${record.orderId} already existed`);
  return result.record;
}
