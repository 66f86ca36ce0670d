import type { z } from "zod";
import { ok, type Result } from "./result.js";
import { parseStateRecordBySchema, type StateRecord, stateRecordSchema } from "./state-record.js";
import { ISO_INSTANT, instantExists, isoInstantSchema } from "./time.js";
import { isTraceparent, traceparentSchema } from "./trace-context.js";
import type { ValidationError } from "./validation.js";
import { isWorkflowVersion } from "./workflow.js";

/**
 * A state record exactly as `stateRecordSchema` would return it: the schema accepts it and its output
 * equals it, so it needs no parse (every field present, no default to fill, no unknown key, current
 * version). Equal as values: zod would rebuild it with its keys in the schema's order, which the records
 * this app builds already have; another order is accepted and kept. Checking that by hand costs a fraction of zod's parse, and every write of a record pays it.
 *
 * The structure (which fields, which are nullable, arrays and nested objects) is written out here; the
 * bounds are read from each field's own schema, so a changed bound needs no change here. A field whose
 * schema carries a rule this check does not mirror refuses every value, and an object of another
 * prototype is refused: false only means the caller falls back to zod. What is judged is what JSON
 * carries, the enumerable string-keyed properties: a symbol key or a named property of an array, which
 * zod ignores and JSON drops, is not looked for.
 */
export function conformsToStateRecord(value: unknown): value is StateRecord {
  // Built on first use: state-record.ts imports this module, so its schema does not exist yet when this one loads.
  recordCheck ??= stateRecordCheck();
  return recordCheck(value);
}

type Check = (value: unknown) => boolean;

let recordCheck: Check | undefined;

const refuse: Check = () => false;

type RecordShape = typeof stateRecordSchema.shape;

/** One check per field of an object schema: a field added to the schema does not compile until it has one. */
type FieldChecks<S extends z.ZodObject> = { readonly [K in keyof S["shape"]]: Check };

function stateRecordCheck(): Check {
  const shape = stateRecordSchema.shape;
  const history = shape.history.unwrap();
  return strictObjectOf(stateRecordSchema, {
    orderId: textOf(shape.orderId),
    processState: oneOfOf(shape.processState),
    lockedBy: nullable(textOf(shape.lockedBy.unwrap())),
    completeBy: nullable(instantOf(shape.completeBy.unwrap())),
    notBefore: instantOf(shape.notBefore),
    failureCount: integerOf(shape.failureCount),
    compensationRecoveries: integerOf(shape.compensationRecoveries.unwrap()),
    hostInterruptions: integerOf(shape.hostInterruptions.unwrap()),
    deferredSince: nullable(instantOf(shape.deferredSince.unwrap())),
    attempt: integerOf(shape.attempt),
    steps: arrayOf(shape.steps, stepCheck(shape.steps.element)),
    compensationLog: arrayOf(shape.compensationLog, compensationEntryCheck(shape.compensationLog.element)),
    retryBudget: retryBudgetCheck(shape.retryBudget),
    lastError: nullable(failureCheck(shape.lastError.unwrap())),
    history: arrayOf(history, historyEntryCheck(history.element)),
    historySummary: nullable(historySummaryCheck(shape.historySummary.unwrap().unwrap())),
    replyTo: nullable(textOf(shape.replyTo.unwrap())),
    traceparent: nullable(traceparentOf(shape.traceparent.unwrap().unwrap())),
    schemaVersion: literalOf(shape.schemaVersion),
    workflowVersion: integerOf(shape.workflowVersion, isWorkflowVersion),
    createdAt: instantOf(shape.createdAt),
    progressAt: instantOf(shape.progressAt),
    updatedAt: instantOf(shape.updatedAt),
  });
}

function stepCheck(schema: RecordShape["steps"]["element"]): Check {
  const shape = schema.shape;
  return strictObjectOf(schema, {
    name: oneOfOf(shape.name),
    status: oneOfOf(shape.status),
    completeBy: nullable(instantOf(shape.completeBy.unwrap())),
    attempt: integerOf(shape.attempt),
    allowance: integerOf(shape.allowance),
    reference: nullable(textOf(shape.reference.unwrap())),
    updatedAt: nullable(instantOf(shape.updatedAt.unwrap())),
  });
}

function compensationEntryCheck(schema: RecordShape["compensationLog"]["element"]): Check {
  const shape = schema.shape;
  return strictObjectOf(schema, {
    sequence: integerOf(shape.sequence),
    step: oneOfOf(shape.step),
    idempotencyKey: textOf(shape.idempotencyKey),
    reference: nullable(textOf(shape.reference.unwrap())),
    recordedAt: instantOf(shape.recordedAt),
  });
}

function retryBudgetCheck(schema: RecordShape["retryBudget"]): Check {
  const shape = schema.shape;
  return strictObjectOf(schema, {
    limit: integerOf(shape.limit),
    granted: integerOf(shape.granted),
    undoReserve: integerOf(shape.undoReserve.unwrap()),
  });
}

function failureCheck(schema: ReturnType<RecordShape["lastError"]["unwrap"]>): Check {
  const shape = schema.shape;
  return strictObjectOf(schema, {
    kind: oneOfOf(shape.kind),
    code: textOf(shape.code),
    message: textOf(shape.message),
    step: nullable(oneOfOf(shape.step.unwrap())),
    at: instantOf(shape.at),
  });
}

function historyEntryCheck(schema: ReturnType<RecordShape["history"]["unwrap"]>["element"]): Check {
  const shape = schema.shape;
  return strictObjectOf(schema, {
    at: instantOf(shape.at),
    actor: textOf(shape.actor),
    command: textOf(shape.command),
    from: oneOfOf(shape.from),
    to: oneOfOf(shape.to),
    attempt: integerOf(shape.attempt),
    step: nullable(oneOfOf(shape.step.unwrap())),
    code: nullable(textOf(shape.code.unwrap())),
  });
}

function historySummaryCheck(
  schema: ReturnType<ReturnType<RecordShape["historySummary"]["unwrap"]>["unwrap"]>,
): Check {
  const shape = schema.shape;
  return strictObjectOf(schema, {
    entries: integerOf(shape.entries),
    since: instantOf(shape.since),
    until: instantOf(shape.until),
    commands: stringRecordOf(shape.commands),
  });
}

/** The parts of a zod check's definition the rules below read. */
interface CheckDefinition {
  readonly check: string;
  readonly format?: string;
  readonly inclusive?: boolean;
  readonly value?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
}

function checksOf(schema: z.ZodType): CheckDefinition[] {
  return (schema.def.checks ?? []).map((check) => check._zod.def as CheckDefinition);
}

/** An object as literals, spreads and JSON.parse make them: one of another prototype may inherit fields. */
function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * A strict object: exactly the fields named (zod reports any other as unknown), each passing its check.
 * Records keep the schema's order of keys (newPendingRecord writes it, spreads keep it), which is checked
 * by comparison; another order is checked by a lookup.
 */
function strictObjectOf<S extends z.ZodObject>(schema: S, fields: FieldChecks<S>): Check {
  if (checksOf(schema).length > 0) return refuse;
  const names = Object.keys(fields);
  const checks = Object.values<Check>(fields);
  const byName = new Map(Object.entries<Check>(fields));
  return (value) => {
    if (!isPlainObject(value)) return false;
    // `for...in` yields each key once, so as many known keys as fields means every field is there.
    let count = 0;
    for (const key in value) {
      const check = key === names[count] ? checks[count] : byName.get(key);
      if (check === undefined || !check(value[key])) return false;
      count++;
    }
    return count === names.length;
  };
}

/** A schema's length bounds; undefined when it has any other rule, which the checks do not mirror. */
function lengthBoundsOf(schema: z.ZodType): { readonly min: number; readonly max: number } | undefined {
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  for (const check of checksOf(schema)) {
    if (check.check === "min_length") min = Math.max(min, check.minimum ?? 0);
    else if (check.check === "max_length") max = Math.min(max, check.maximum ?? 0);
    else return undefined;
  }
  return { min, max };
}

/** An array within its length bounds, every element passing `element`. */
function arrayOf(schema: z.ZodArray, element: Check): Check {
  const bounds = lengthBoundsOf(schema);
  if (!bounds) return refuse;
  const { min, max } = bounds;
  return (value) => {
    if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false;
    if (value.length < min || value.length > max) return false;
    for (let i = 0; i < value.length; i++) {
      if (!element(value[i])) return false;
    }
    return true;
  };
}

/** `z.record(z.string(), integer)`: any string key but `__proto__` (zod drops it), no symbol key (zod refuses one). */
function stringRecordOf(schema: z.ZodRecord<z.ZodString, z.ZodNumber>): Check {
  const keyType = schema.def.keyType;
  const plainKeys = keyType.def.type === "string" && checksOf(keyType).length === 0;
  if (!plainKeys || checksOf(schema).length > 0) return refuse;
  const entry = integerOf(schema.def.valueType);
  return (value) => {
    if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) return false;
    for (const key in value) {
      if (key === "__proto__" || !entry(value[key])) return false;
    }
    return true;
  };
}

function nullable(check: Check): Check {
  return (value) => value === null || check(value);
}

/**
 * A `text()` field. zod counts code points, one or two UTF-16 units each: a length in units within the
 * bounds is within them in code points too, except that a minimum above 1 needs twice as many units.
 */
function textOf(schema: z.ZodString): Check {
  const bounds = lengthBoundsOf(schema);
  if (!bounds) return refuse;
  const { min, max } = bounds;
  const unitsAtLeast = min <= 1 ? min : 2 * min;
  return (value) => typeof value === "string" && value.length >= unitsAtLeast && value.length <= max;
}

/**
 * An `integer()` field: a safe integer within inclusive bounds, and `refinement` when the schema has one
 * (the check cannot see what a zod refinement tests: the caller names the predicate it mirrors).
 */
function integerOf(schema: z.ZodNumber, refinement?: (value: number) => boolean): Check {
  let integral = false;
  let refined = false;
  let min = Number.NEGATIVE_INFINITY;
  let max = Number.POSITIVE_INFINITY;
  for (const check of checksOf(schema)) {
    const bound = typeof check.value === "number" && check.inclusive === true ? check.value : undefined;
    if (check.check === "number_format" && check.format === "safeint") integral = true;
    else if (check.check === "greater_than" && bound !== undefined) min = Math.max(min, bound);
    else if (check.check === "less_than" && bound !== undefined) max = Math.min(max, bound);
    else if (check.check === "custom" && refinement && !refined) refined = true;
    else return refuse;
  }
  if (!integral || refined !== (refinement !== undefined)) return refuse;
  return (value) =>
    Number.isSafeInteger(value) &&
    (value as number) >= min &&
    (value as number) <= max &&
    (refinement === undefined || refinement(value as number));
}

function oneOfOf(schema: z.ZodEnum): Check {
  if (checksOf(schema).length > 0) return refuse;
  const values = new Set<unknown>(schema.options);
  return (value) => values.has(value);
}

function literalOf(schema: z.ZodLiteral): Check {
  if (checksOf(schema).length > 0) return refuse;
  const values = new Set<unknown>(schema.values);
  return (value) => values.has(value);
}

/** `isoInstantSchema` (time.ts): its pattern and its refinement that the time exists. */
function instantOf(schema: z.ZodType): Check {
  if (schema !== isoInstantSchema) return refuse;
  return (value) => typeof value === "string" && ISO_INSTANT.test(value) && instantExists(value);
}

/** `traceparentSchema` (trace-context.ts). */
function traceparentOf(schema: z.ZodType): Check {
  return schema === traceparentSchema ? isTraceparent : refuse;
}

/** Validates a record read from a store written by this or an older deployment. */
export function parseStateRecord(input: unknown): Result<StateRecord, ValidationError> {
  // Every write validates its record: the common one, current and complete, is checked without zod.
  return conformsToStateRecord(input) ? ok(input) : parseStateRecordBySchema(input);
}
