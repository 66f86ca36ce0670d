import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { applyTransition } from "../../src/domain/apply-transition.js";
import { nextToCompensate } from "../../src/domain/record-changes.js";
import { HISTORY_LIMIT } from "../../src/domain/record-history.js";
import {
  newPendingRecord,
  PROCESS_STATES,
  parseStateRecordBySchema,
  STATE_SCHEMA_VERSION,
  type StateRecord,
  stateRecordSchema,
} from "../../src/domain/state-record.js";
import { conformsToStateRecord, parseStateRecord } from "../../src/domain/state-record-check.js";
import { addMilliseconds, isoInstantSchema } from "../../src/domain/time.js";
import { traceparentSchema } from "../../src/domain/trace-context.js";
import type { Actor, Command } from "../../src/domain/transition-commands.js";
import { instanceIdFor, ORDER_STEPS, type StepName, WORKFLOW_VERSIONS } from "../../src/domain/workflow.js";
import { pendingRecord, RECOVERY_POLICY, sampleOrder, T0 } from "../support/records.js";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const policy = RECOVERY_POLICY;

/** The actors' transitions of a record, on a clock that moves a second a command. */
function actors() {
  let clock = Date.parse(T0);
  const now = () => {
    clock += 1_000;
    return new Date(clock).toISOString();
  };
  const after = (record: StateRecord, actor: Actor, command: Command) => {
    const result = applyTransition(record, actor, command);
    if (!result.ok) throw result.error;
    return result.value.record;
  };
  const owner = (record: StateRecord) => instanceIdFor(record.orderId, record.attempt);
  const start = (record: StateRecord, step: StepName) => {
    const at = now();
    const grant = { requestedCalls: 3, amplification: 1 };
    const command = { instanceId: owner(record), step, now: at, completeBy: addMilliseconds(at, 30_000) };
    return after(record, "orchestration", { type: "startStep", ...command, ...grant });
  };
  return {
    now,
    after,
    owner,
    start,
    wait: (ms: number) => {
      clock += ms;
    },
    claim: (record: StateRecord) =>
      after(record, "starter", { type: "claim", now: now(), attemptTimeoutMs: 60_000 }),
    complete: (record: StateRecord, step: StepName) =>
      after(start(record, step), "orchestration", {
        type: "completeStep",
        instanceId: owner(record),
        step,
        now: now(),
        reference: `ref-${step}-7f3a9c1e`,
      }),
  };
}

const failure = { kind: "permanent", code: "Refused", message: "the partner refused", step: null } as const;

/** Records as the transitions write them, named by what they show. */
function realRecords(): ReadonlyMap<string, StateRecord> {
  const { after, owner, now, claim, start, complete } = actors();
  const pending = pendingRecord("ord-real", { traceparent: TRACEPARENT });
  const claimed = claim(pending);
  const oneCompleted = complete(claimed, "reserveInventory");
  const allCompleted = ORDER_STEPS.reduce(complete, claimed);
  const versionOne = newPendingRecord({
    order: sampleOrder("ord-v1"),
    replyTo: null,
    now: T0,
    retryBudgetLimit: 30,
    undoReserve: 6,
    workflowVersion: 1,
  });
  return new Map([
    ["pending", pendingRecord()],
    ["pending under workflow version 1", versionOne],
    ["pending with a traceparent", pending],
    ["claimed", claimed],
    ["with a step running", start(claimed, "reserveInventory")],
    ["with a step completed", oneCompleted],
    [
      "in error",
      after(claimed, "orchestration", { type: "fail", instanceId: owner(claimed), now: now(), failure }),
    ],
    [
      "processed",
      after(allCompleted, "orchestration", { type: "finish", instanceId: owner(allCompleted), now: now() }),
    ],
    ...troubledRecords(oneCompleted),
    ["with a history summary", churnedRecord()],
  ]);
}

/** An order with a step completed, recovered with the next in doubt, or compensated. */
function troubledRecords(oneCompleted: StateRecord): [string, StateRecord][] {
  const { after, owner, now, start, wait } = actors();
  const secondRunning = start(oneCompleted, "chargePayment");
  wait(120_000);
  const recovered = after(secondRunning, "supervisor", {
    type: "recover",
    expectedLockedBy: owner(secondRunning),
    now: now(),
    policy,
    random: () => 0.5,
  });
  const compensating = after(oneCompleted, "orchestration", {
    type: "beginCompensation",
    instanceId: owner(oneCompleted),
    now: now(),
    completeBy: addMilliseconds(now(), 30_000),
    failure,
    undo: { callsPerRequest: 2, amplification: 1 },
  });
  const undone = after(compensating, "orchestration", {
    type: "compensateStep",
    instanceId: owner(compensating),
    step: nextToCompensate(compensating)?.step ?? "reserveInventory",
    now: now(),
    outcome: "compensated",
  });
  return [
    ["recovered, a step in doubt and the last error kept", recovered],
    ["compensating", compensating],
    [
      "compensated",
      after(undone, "orchestration", { type: "finishCompensation", instanceId: owner(undone), now: now() }),
    ],
  ];
}

/** An order claimed and given back until its oldest transitions are folded into the summary. */
function churnedRecord(): StateRecord {
  const { after, owner, now, claim } = actors();
  let record = pendingRecord("ord-churn");
  while (record.history.length < HISTORY_LIMIT || record.historySummary === null) {
    const claimed = claim(record);
    record = after(claimed, "starter", {
      type: "releaseClaim",
      instanceId: owner(claimed),
      now: now(),
      retryAt: now(),
      reason: "its orchestration did not start",
    });
  }
  return record;
}

const REAL = realRecords();

type Path = readonly (string | number)[];

/** A value of the record judged on its own: a scalar, or a nullable object that is null. */
interface Leaf {
  readonly path: Path;
  readonly schema: z.ZodType;
  readonly nullable: boolean;
}

/** Where a record can be broken: its scalars, its strict objects, its arrays and its string-keyed records. */
interface Parts {
  readonly leaves: Leaf[];
  readonly objects: { readonly path: Path; readonly fields: readonly string[] }[];
  readonly arrays: Path[];
  readonly records: Path[];
}

function partsOf(record: StateRecord): Parts {
  const parts: Parts = { leaves: [], objects: [], arrays: [], records: [] };
  visit(stateRecordSchema, record, [], false, parts);
  return parts;
}

function visit(outer: z.ZodType, value: unknown, path: Path, nullable: boolean, parts: Parts): void {
  let schema = outer;
  while (schema instanceof z.ZodDefault || schema instanceof z.ZodNullable) {
    if (schema instanceof z.ZodNullable) nullable = true;
    schema = schema.unwrap() as z.ZodType;
  }
  const node = value as Record<string, unknown>;
  if (schema instanceof z.ZodObject && value !== null) {
    parts.objects.push({ path, fields: Object.keys(schema.shape) });
    for (const [key, field] of Object.entries(schema.shape))
      visit(field, node[key], [...path, key], false, parts);
  } else if (schema instanceof z.ZodArray) {
    parts.arrays.push(path);
    for (const [i, item] of (value as unknown[]).entries())
      visit(schema.element as z.ZodType, item, [...path, i], false, parts);
  } else if (schema instanceof z.ZodRecord) {
    parts.records.push(path);
    for (const [key, item] of Object.entries(node))
      visit(schema.valueType as z.ZodType, item, [...path, key], false, parts);
  } else {
    parts.leaves.push({ path, schema, nullable });
  }
}

const MUTATION_KINDS = [
  "wrongType",
  "outOfRange",
  "badText",
  "badInstant",
  "badEnum",
  "badTraceparent",
  "otherSchemaVersion",
  "unknownWorkflowVersion",
  "unknownKey",
  "missingField",
  "renamedField",
  "tooManyHistoryEntries",
  "otherPrototype",
  "badRecordKey",
] as const;
type MutationKind = (typeof MUTATION_KINDS)[number];

interface Mutation {
  readonly kind: MutationKind;
  readonly where: string;
  /** A broken copy of the record. */
  readonly apply: (record: StateRecord) => unknown;
}

const NONEXISTENT_INSTANTS = [
  "2026-02-30T00:00:00.000Z",
  "2026-02-29T12:00:00.000Z",
  "2026-01-01T24:00:00.000Z",
  "2026-13-01T00:00:00.000Z",
  "2026-00-10T00:00:00.000Z",
  "2026-04-31T00:00:00.000Z",
  "2026-01-01T00:60:00.000Z",
  "2026-01-01T00:00:60.000Z",
];
const MALFORMED_INSTANTS = [
  "2026-01-01T00:00:00Z",
  "2026-01-01 00:00:00.000Z",
  "2026-01-01T00:00:00.000+00:00",
  "",
];
const BAD_TRACEPARENTS = [
  `00-${"0".repeat(32)}-00f067aa0ba902b7-01`,
  `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`,
  TRACEPARENT.toUpperCase(),
  `01${TRACEPARENT.slice(2)}`,
  `${TRACEPARENT}-00`,
];

class NotARecord {}
class NotAnArray extends Array {}

/** Values of the wrong kind for a leaf, and values of its kind that break one of its rules. */
function wrongValuesOf(leaf: Leaf): [MutationKind, unknown][] {
  const schema = leaf.schema;
  const ofType = (...values: unknown[]): [MutationKind, unknown][] =>
    [...values, true, {}, [], undefined, ...(leaf.nullable ? [] : [null])].map((v) => ["wrongType", v]);
  const breaking = (kind: MutationKind, values: readonly unknown[]) =>
    values.map((v): [MutationKind, unknown] => [kind, v]);
  if (schema === isoInstantSchema)
    return [
      ...ofType(Date.parse(T0)),
      ...breaking("badInstant", [...NONEXISTENT_INSTANTS, ...MALFORMED_INSTANTS]),
    ];
  if (schema === traceparentSchema) return [...ofType(7), ...breaking("badTraceparent", BAD_TRACEPARENTS)];
  if (schema instanceof z.ZodString) {
    const { minLength, maxLength } = schema;
    const broken = [...(maxLength === null ? [] : ["x".repeat(maxLength + 1)]), ...(minLength ? [""] : [])];
    return [...ofType(7), ...breaking("badText", broken)];
  }
  if (schema instanceof z.ZodNumber) return [...ofType("7", 7n), ...numberBreakers(schema)];
  if (schema instanceof z.ZodEnum) return [...ofType(7), ...breaking("badEnum", ["NotOneOfThem", ""])];
  if (schema instanceof z.ZodLiteral) {
    const version = STATE_SCHEMA_VERSION;
    return [...ofType(String(version)), ...breaking("otherSchemaVersion", [version + 1, version - 1, 99])];
  }
  if (schema instanceof z.ZodObject) return ofType(7);
  throw new Error(`${leaf.path.join(".")}: a kind of field this test does not know how to break`);
}

function numberBreakers(schema: z.ZodNumber): [MutationKind, unknown][] {
  const min = schema.minValue ?? 0;
  const max = schema.maxValue ?? Number.MAX_SAFE_INTEGER;
  const outOfRange = [min - 1, max + 1, min + 0.5, Number.NaN, Number.POSITIVE_INFINITY, -Infinity];
  const broken = outOfRange.map((v): [MutationKind, unknown] => ["outOfRange", v]);
  const refined = (schema.def.checks ?? []).some((check) => check._zod.def.check === "custom");
  if (!refined) return broken;
  // The workflow version's refinement: in range, but not a version this deployment runs.
  const unknown = [min, max, Math.max(...WORKFLOW_VERSIONS) + 1].filter(
    (v) => !WORKFLOW_VERSIONS.includes(v),
  );
  return [...broken, ...unknown.map((v): [MutationKind, unknown] => ["unknownWorkflowVersion", v])];
}

/** A copy of `record` with `change` made to the value at `path` (the record itself at the empty path). */
function changed(record: StateRecord, path: Path, change: (node: unknown) => unknown): unknown {
  const copy = structuredClone(record) as unknown;
  if (path.length === 0) return change(copy);
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as never)[key], copy);
  const key = path[path.length - 1] as string | number;
  (parent as Record<string | number, unknown>)[key] = change(
    (parent as Record<string | number, unknown>)[key],
  );
  return copy;
}

const named = (path: Path) => (path.length === 0 ? "(record)" : path.join("."));
const ownEnumerable = (node: object, key: PropertyKey, value: unknown) =>
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });

/** Every way this test knows to break `record`, each a single change. */
function mutationsOf(record: StateRecord): Mutation[] {
  const parts = partsOf(record);
  const at = (
    kind: MutationKind,
    path: Path,
    change: (node: unknown) => unknown,
    what: string,
  ): Mutation => ({
    kind,
    where: `${named(path)}: ${what}`,
    apply: (r) => changed(r, path, change),
  });
  const mutations: Mutation[] = [];
  for (const leaf of parts.leaves) {
    for (const [kind, value] of wrongValuesOf(leaf))
      mutations.push(at(kind, leaf.path, () => value, `set to ${String(value)}`));
  }
  for (const { path, fields } of parts.objects) {
    mutations.push(at("unknownKey", path, (node) => ({ ...(node as object), note: "x" }), "a field added"));
    mutations.push(
      at("unknownKey", path, (node) => ownEnumerable(node as object, "__proto__", {}), "__proto__"),
    );
    mutations.push(
      at("otherPrototype", path, (node) => Object.setPrototypeOf(node, NotARecord.prototype), ""),
    );
    mutations.push(at("otherPrototype", path, (node) => Object.setPrototypeOf(node, null), "null prototype"));
    for (const field of fields) {
      const without = (node: unknown) => {
        const { [field]: _, ...rest } = node as Record<string, unknown>;
        return rest;
      };
      const renamed = (node: unknown) => ({
        ...(without(node) as object),
        [`${field}s`]: (node as never)[field],
      });
      mutations.push(at("missingField", path, without, `${field} left out`));
      mutations.push(at("renamedField", path, renamed, `${field} renamed`));
    }
    if (path.length > 0) {
      mutations.push(at("wrongType", path, () => [], "an array"));
      mutations.push(at("wrongType", path, () => "x", "a string"));
    }
  }
  for (const path of parts.arrays) {
    mutations.push(at("wrongType", path, () => ({}), "an object"));
    mutations.push(at("wrongType", path, () => null, "null"));
    mutations.push(at("otherPrototype", path, (node) => NotAnArray.from(node as unknown[]), "a subclass"));
  }
  for (const path of parts.records) {
    mutations.push(
      at("badRecordKey", path, (node) => ownEnumerable(node as object, "__proto__", 1), "__proto__"),
    );
    mutations.push(
      at("badRecordKey", path, (node) => ownEnumerable(node as object, Symbol("s"), 1), "a symbol"),
    );
    mutations.push(at("wrongType", path, () => [], "an array"));
  }
  mutations.push(at("tooManyHistoryEntries", ["history"], () => historyOf(record, HISTORY_LIMIT + 1), ""));
  return mutations;
}

/** `length` history entries: the record's own, repeated, or a claim's if it has none. */
function historyOf(record: StateRecord, length: number): unknown[] {
  const claim = { at: T0, actor: "starter", command: "claim", from: "Pending", to: "Processing" };
  const entries =
    record.history.length > 0 ? record.history : [{ ...claim, attempt: 1, step: null, code: null }];
  return Array.from({ length }, (_, i) => structuredClone(entries[i % entries.length]));
}

function expectParsedAsZodDoes(input: unknown): void {
  const parsed = parseStateRecord(input);
  const byZod = parseStateRecordBySchema(input);
  expect(parsed.ok).toBe(byZod.ok);
  if (parsed.ok && byZod.ok) expect(parsed.value).toStrictEqual(byZod.value);
  if (!parsed.ok && !byZod.ok) {
    expect(parsed.error.message).toBe(byZod.error.message);
    expect(parsed.error.issues).toEqual(byZod.error.issues);
  }
}

/** The promise of the fast check: what it accepts, the schema accepts and returns unchanged. */
function expectAcceptedOnlyAsZodWouldReturnIt(input: unknown): void {
  if (!conformsToStateRecord(input)) return;
  const parsed = stateRecordSchema.safeParse(input);
  expect(parsed.success).toBe(true);
  expect(parsed.data).toStrictEqual(input);
}

describe("conformsToStateRecord", () => {
  it.each([...REAL.keys()])("accepts a record as the transitions write it: %s", (name) => {
    const record = REAL.get(name) as StateRecord;
    expect(conformsToStateRecord(record)).toBe(true);
    expect(conformsToStateRecord(JSON.parse(JSON.stringify(record)))).toBe(true);
    expectAcceptedOnlyAsZodWouldReturnIt(record);
    // The fast path hands back the record itself; zod would have built a copy.
    const parsed = parseStateRecord(record);
    expect(parsed.ok && parsed.value).toBe(record);
  });

  it("is tried on records in every state but CompensationFailed, each optional part filled in one", () => {
    const records = [...REAL.values()];
    const states = new Set(records.map((r) => r.processState));
    expect(PROCESS_STATES.filter((state) => !states.has(state))).toEqual(["CompensationFailed"]);
    expect(records.some((r) => r.traceparent !== null)).toBe(true);
    expect(records.some((r) => r.lastError !== null)).toBe(true);
    expect(records.some((r) => r.historySummary !== null)).toBe(true);
    expect(records.some((r) => r.compensationLog.length > 0)).toBe(true);
    expect(records.some((r) => r.steps.some((s) => s.status === "InDoubt"))).toBe(true);
  });

  it("accepts a record whose fields come in another order", () => {
    const record = REAL.get("processed") as StateRecord;
    const reordered = Object.fromEntries(Object.entries(record).reverse());
    expect(conformsToStateRecord(reordered)).toBe(true);
    expectAcceptedOnlyAsZodWouldReturnIt(reordered);
  });

  it.each(MUTATION_KINDS)("refuses every record broken by %s, and parse answers as zod does", (kind) => {
    let broken = 0;
    for (const [name, record] of REAL) {
      for (const mutation of mutationsOf(record).filter((m) => m.kind === kind)) {
        const input = mutation.apply(record);
        expect(conformsToStateRecord(input), `${name}, ${mutation.where}`).toBe(false);
        expectParsedAsZodDoes(input);
        broken++;
      }
    }
    expect(broken).toBeGreaterThan(0);
  });

  it("leaves a record with a defaulted field missing to zod, which fills it in", () => {
    const { hostInterruptions: _, ...older } = REAL.get("processed") as StateRecord;
    expect(conformsToStateRecord(older)).toBe(false);
    const parsed = parseStateRecord(older);
    expect(parsed.ok && parsed.value.hostInterruptions).toBe(0);
  });
});

/** A value a leaf may hold, and whether the fast check is expected to take it (it may leave some to zod). */
interface ValidValue {
  readonly value: unknown;
  readonly fast: boolean;
}

const instants = fc
  .date({
    min: new Date("0000-01-01T00:00:00.000Z"),
    max: new Date("9999-12-31T23:59:59.999Z"),
    noInvalidDate: true,
  })
  .map((date) => date.toISOString());
const hex = (length: number) =>
  fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`)).filter((h) => /[^0]/.test(h) || length === 2);

/** Any value the schema allows at `leaf`, bounds and edges included. */
function validValuesOf(leaf: Leaf): fc.Arbitrary<ValidValue> {
  const fast = (arbitrary: fc.Arbitrary<unknown>) => arbitrary.map((value) => ({ value, fast: true }));
  const values = ((): fc.Arbitrary<ValidValue> => {
    const schema = leaf.schema;
    if (schema === isoInstantSchema)
      return fast(
        fc.oneof(instants, fc.constantFrom("2024-02-29T23:59:59.999Z", "2000-02-29T00:00:00.000Z")),
      );
    if (schema === traceparentSchema)
      return fast(fc.tuple(hex(32), hex(16), hex(2)).map((ids) => `00-${ids.join("-")}`));
    if (schema instanceof z.ZodString) return textValues(schema.minLength ?? 0, schema.maxLength ?? 2_000);
    if (schema instanceof z.ZodNumber) {
      const refined = (schema.def.checks ?? []).some((check) => check._zod.def.check === "custom");
      if (refined) return fast(fc.constantFrom(...WORKFLOW_VERSIONS));
      const min = schema.minValue ?? 0;
      const max = schema.maxValue ?? 0;
      return fast(fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max, ...(min <= 0 ? [-0] : []))));
    }
    if (schema instanceof z.ZodEnum) return fast(fc.constantFrom(...schema.options));
    if (schema instanceof z.ZodLiteral) return fast(fc.constant(STATE_SCHEMA_VERSION));
    // A nullable object that is null: this test only ever leaves it so.
    return fast(fc.constant(null));
  })();
  return leaf.nullable ? fc.oneof(values, fast(fc.constant(null))) : values;
}

/**
 * Texts within bounds. zod counts code points: a text of `max` characters outside the Basic Multilingual
 * Plane is `2 × max` units long, which the fast check, counting units, leaves to zod.
 */
function textValues(min: number, max: number): fc.Arbitrary<ValidValue> {
  return fc.oneof(
    fc.string({ minLength: min, maxLength: Math.min(max, 80) }).map((value) => ({ value, fast: true })),
    fc.constantFrom("x".repeat(max), "x".repeat(Math.max(min, 1))).map((value) => ({ value, fast: true })),
    fc.string({ unit: "binary", minLength: min, maxLength: Math.min(max, 80) }).map((value) => ({
      value,
      fast: value.length <= max,
    })),
    fc.constant({ value: "\u{1F600}".repeat(max), fast: false }),
  );
}

const commandCounts = fc.dictionary(
  fc.string().filter((key) => key !== "__proto__"),
  fc.integer({ min: 1, max: 1_000_000_000 }),
  { noNullPrototype: true, maxKeys: 6 },
);

/** A record from the transitions with any number of its values changed to others the schema allows. */
const validRecords: fc.Arbitrary<{ readonly record: StateRecord; readonly fast: boolean }> = fc
  .constantFrom(...REAL.values())
  .chain((base) => {
    const parts = partsOf(base);
    const change = fc.oneof(
      fc
        .constantFrom(...parts.leaves)
        .chain((leaf) => validValuesOf(leaf).map((v) => ({ ...v, path: leaf.path }))),
      ...(parts.records.length > 0
        ? [commandCounts.map((value) => ({ value, fast: true, path: parts.records[0] as Path }))]
        : []),
      fc.constant({ value: historyOf(base, HISTORY_LIMIT), fast: true, path: ["history"] as Path }),
    );
    return fc.array(change, { maxLength: 8 }).map((changes) => ({
      record: changes.reduce((r, c) => changed(r, c.path, () => c.value) as StateRecord, base),
      fast: changes.every((c) => c.fast),
    }));
  });

describe("conformsToStateRecord against zod", () => {
  it("takes every valid record it can, and what it takes zod accepts and returns unchanged", () => {
    fc.assert(
      fc.property(validRecords, ({ record, fast }) => {
        if (fast) expect(conformsToStateRecord(record)).toBe(true);
        expectAcceptedOnlyAsZodWouldReturnIt(record);
        expectParsedAsZodDoes(record);
      }),
      { numRuns: 1_000 },
    );
  });

  it("refuses every valid record broken in one place, and parse still answers as zod does", () => {
    fc.assert(
      fc.property(validRecords, fc.nat(), ({ record }, pick) => {
        const mutations = mutationsOf(record);
        const mutation = mutations[pick % mutations.length] as Mutation;
        const input = mutation.apply(record);
        expect(conformsToStateRecord(input), mutation.where).toBe(false);
        expectAcceptedOnlyAsZodWouldReturnIt(input);
        expectParsedAsZodDoes(input);
      }),
      { numRuns: 500 },
    );
  });
});
