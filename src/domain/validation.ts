import { type ZodType, z } from "zod";
import { err, ok, type Result } from "./result.js";

/** One broken rule: which field (a path like `items[0].quantity`), which rule, and a sentence for people. */
export interface ValidationIssue {
  readonly field: string;
  readonly rule: string;
  readonly message: string;
}

export class ValidationError extends Error {
  override readonly name = "ValidationError";
  readonly kind = "ValidationError" as const;
  constructor(
    readonly subject: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(`invalid ${subject}: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`);
  }
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out === "" ? "(message)" : out;
}

const RULE_BY_CODE: Record<string, string> = {
  invalid_type: "type",
  too_small: "min",
  too_big: "max",
  invalid_format: "format",
  not_multiple_of: "multipleOf",
  unrecognized_keys: "unknownField",
  invalid_value: "oneOf",
  invalid_union: "oneOf",
  custom: "custom",
};

function toIssues(issue: z.core.$ZodIssue): ValidationIssue[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      field: formatPath([...issue.path, key]),
      rule: "unknownField",
      message: "is not a field of this message (unknown fields are rejected)",
    }));
  }
  const named = issue.code === "custom" ? (issue.params as { rule?: unknown } | undefined)?.rule : undefined;
  const rule =
    issue.message === REQUIRED
      ? "required"
      : typeof named === "string"
        ? named
        : (RULE_BY_CODE[issue.code] ?? issue.code);
  return [{ field: formatPath(issue.path), rule, message: issue.message }];
}

/** Validates `input` against `schema`, collecting every violation rather than stopping at the first. */
export function validate<T>(subject: string, schema: ZodType<T>, input: unknown): Result<T, ValidationError> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return ok(parsed.data);
  return err(new ValidationError(subject, parsed.error.issues.flatMap(toIssues)));
}

/** Upgrades a contract written under the version it is keyed by to the next version, fields and all. */
export type Upgrades = Readonly<
  Record<number, (older: Readonly<Record<string, unknown>>) => Record<string, unknown>>
>;

/**
 * Validates a versioned contract (a message or record with `schemaVersion`). One written under an older
 * version is first upgraded a version at a time by `upgrades`, then validated as current. Any other
 * version is refused with that alone as its reason, before its fields are judged: a newer one's fields
 * would be misread, or reported as a list of violations that hides the cause.
 */
export function validateVersioned<T>(
  subject: string,
  schema: ZodType<T>,
  currentVersion: number,
  input: unknown,
  upgrades: Upgrades = {},
): Result<T, ValidationError> {
  const upgraded = upgradeToCurrent(input, currentVersion, upgrades);
  const version =
    typeof upgraded === "object" && upgraded !== null && "schemaVersion" in upgraded
      ? upgraded.schemaVersion
      : undefined;
  if (typeof version === "number" && Number.isInteger(version) && version !== currentVersion) {
    const newer = version > currentVersion;
    return err(
      new ValidationError(subject, [
        {
          field: "schemaVersion",
          rule: newer ? "newerVersion" : "olderVersion",
          message: newer
            ? `is ${version}, newer than the ${currentVersion} this deployment reads: written by a later version of the app, which is the one to read it`
            : `is ${version}, older than the ${currentVersion} this deployment reads, and nothing upgrades it`,
        },
      ]),
    );
  }
  return validate(subject, schema, upgraded);
}

/** `input` upgraded a version at a time to `currentVersion`, as far as `upgrades` go; anything else as it is. */
export function upgradeToCurrent(input: unknown, currentVersion: number, upgrades: Upgrades): unknown {
  let value = input;
  for (;;) {
    if (typeof value !== "object" || value === null || !("schemaVersion" in value)) return value;
    const version = value.schemaVersion;
    const upgrade = typeof version === "number" && version < currentVersion ? upgrades[version] : undefined;
    if (!upgrade) return value;
    value = upgrade({ ...value });
  }
}

const REQUIRED = "is required";

/** The message for a value of the wrong type, or for a missing one. */
export function typeError(expected: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? REQUIRED : `must be ${expected}`);
}

/** A string field with a length range and, optionally, a pattern described in words. */
export function text(min: number, max: number, pattern?: { regex: RegExp; description: string }) {
  let schema = z
    .string({ error: typeError("a string") })
    .min(min, { error: `must be ${min} to ${max} characters long` })
    .max(max, { error: `must be ${min} to ${max} characters long` });
  if (pattern) schema = schema.regex(pattern.regex, { error: `must contain only ${pattern.description}` });
  return schema;
}

/** An integer field with an inclusive range. */
export function integer(min: number, max: number) {
  const range = `must be an integer from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}`;
  return z
    .number({ error: typeError("a number") })
    .int({ error: range })
    .min(min, { error: range })
    .max(max, { error: range });
}

export function literal<T extends string | number>(value: T) {
  return z.literal(value, { error: typeError(JSON.stringify(value)) });
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: typeError(`one of ${values.join(", ")}`) });
}

/** `text` parsed as JSON when it is an object (not an array or null); undefined for anything else. */
export function jsonObjectOf(text: string): Readonly<Record<string, unknown>> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
