import { isProtected } from "../domain/data-classification.js";
import { STEP_REFERENCE_CLASSES } from "../domain/partner-operations.js";
import type { Result } from "../domain/result.js";
import type { CompensationEntry, StateRecord, StepState, StoredStateRecord } from "../domain/state-record.js";
import type { StepName } from "../domain/workflow.js";
import type { FieldCipher } from "../ports/field-cipher.js";
import type { RetentionStore } from "../ports/retention-store.js";
import type { StateReadModel } from "../ports/state-read-model.js";
import type { CreateResult, Page, StateStore } from "../ports/state-store.js";
import type { NotFoundError, PreconditionFailedError } from "../ports/store-errors.js";

/**
 * A state store, under each of its ports, that keeps the fields classified personal or payment
 * (data-classification.ts) sealed in the store it wraps: the partner's references of those steps, in the
 * step and in the compensation log. Callers see clear values, whichever port returned the record; the
 * wrapped store, its rows and documents, and its backups see only ciphertext. A record stored in clear
 * before protection began reads as it is and is sealed when it is next written. Queries never filter on
 * these fields, so every query passes through.
 */
export class ProtectedStateStore implements StateStore, StateReadModel, RetentionStore {
  constructor(
    private readonly inner: StateStore & StateReadModel & RetentionStore,
    private readonly cipher: FieldCipher,
  ) {}

  async get(orderId: string): Promise<StoredStateRecord | undefined> {
    const record = await this.inner.get(orderId);
    return record && this.open(record);
  }

  async createIfAbsent(record: StateRecord): Promise<CreateResult> {
    const result = await this.inner.createIfAbsent(this.seal(record));
    return result.created
      ? { created: true, record: this.open(result.record) }
      : { created: false, existing: this.open(result.existing) };
  }

  async replace(
    record: StateRecord,
    ifMatch: string,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>> {
    const result = await this.inner.replace(this.seal(record), ifMatch);
    // What was written is the record given, in clear: nothing to open again.
    return result.ok ? { ok: true, value: { ...record, _etag: result.value._etag } } : result;
  }

  // A tombstone holds the order's key, state, attempt and times: nothing sealed.
  getRetired: StateStore["getRetired"] = (orderId) => this.inner.getRetired(orderId);
  queryClaimable: StateStore["queryClaimable"] = async (query) =>
    this.openPage(await this.inner.queryClaimable(query));
  queryExpired: StateStore["queryExpired"] = async (query) =>
    this.openPage(await this.inner.queryExpired(query));
  countProcessing: StateStore["countProcessing"] = () => this.inner.countProcessing();

  listRecent: StateReadModel["listRecent"] = async (query) =>
    this.openPage(await this.inner.listRecent(query));
  countInState: StateReadModel["countInState"] = (state) => this.inner.countInState(state);
  countByState: StateReadModel["countByState"] = () => this.inner.countByState();
  countByWorkflowVersion: StateReadModel["countByWorkflowVersion"] = (states) =>
    this.inner.countByWorkflowVersion(states);
  oldestPending: StateReadModel["oldestPending"] = () => this.inner.oldestPending();
  countFinishedBetween: StateReadModel["countFinishedBetween"] = (from, to) =>
    this.inner.countFinishedBetween(from, to);
  countFinishedPerMinute: StateReadModel["countFinishedPerMinute"] = (from, to) =>
    this.inner.countFinishedPerMinute(from, to);

  // A retired record's key, attempt count and ETag hold nothing sealed.
  queryRetired: RetentionStore["queryRetired"] = (query) => this.inner.queryRetired(query);
  remove: RetentionStore["remove"] = (orderId, ifMatch, purgedAt) =>
    this.inner.remove(orderId, ifMatch, purgedAt);

  private seal<R extends StateRecord>(record: R): R {
    return this.passReferences(record, "seal");
  }

  private open<R extends StateRecord>(record: R): R {
    return this.passReferences(record, "open");
  }

  /** The record with each protected reference sealed or opened; the record itself when it holds none. */
  private passReferences<R extends StateRecord>(record: R, way: Way): R {
    // Most reads and writes of a record happen before any protected step has a reference: no copy then.
    const steps = this.passEach(record.orderId, record.steps, stepNameOf, way);
    const compensationLog = this.passEach(record.orderId, record.compensationLog, loggedStepOf, way);
    if (steps === record.steps && compensationLog === record.compensationLog) return record;
    return { ...record, steps, compensationLog };
  }

  /** `entries` with each protected reference sealed or opened; the same array when none needed it. */
  private passEach<E extends Referenced>(
    orderId: string,
    entries: E[],
    stepOf: (entry: E) => StepName,
    way: Way,
  ): E[] {
    let passed: E[] | undefined;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as E;
      const { reference } = entry;
      if (reference === null || !isProtected(STEP_REFERENCE_CLASSES[stepOf(entry)])) continue;
      if (way === "seal" && this.cipher.isSealed(reference)) continue;
      const context = `${orderId}/${stepOf(entry)}/reference`;
      passed ??= entries.slice();
      passed[i] = {
        ...entry,
        reference:
          way === "seal" ? this.cipher.seal(reference, context) : this.cipher.open(reference, context),
      };
    }
    return passed ?? entries;
  }

  private openPage(page: Page<StoredStateRecord>): Page<StoredStateRecord> {
    return { ...page, items: page.items.map((record) => this.open(record)) };
  }
}

type Way = "seal" | "open";

interface Referenced {
  readonly reference: string | null;
}

const stepNameOf = (step: StepState): StepName => step.name;
const loggedStepOf = (entry: CompensationEntry): StepName => entry.step;
