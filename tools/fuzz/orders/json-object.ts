import type { JsonValue } from "../../../src/ports/message-queue.js";

export type JsonObject = { [key: string]: JsonValue };

/** A deep copy through JSON, which keeps keys such as `__proto__` as plain own properties. */
export function copyJson<T extends JsonValue>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Sets `key` as an own enumerable property, even a key like `__proto__` that `obj[key] =` would not. */
export function setOwn(target: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The object with its keys in another order (and its items' keys too), chosen by `seed`. */
export function reordered(value: JsonObject, seed: number): JsonObject {
  const keys = Object.keys(value);
  const rotated = keys.map((_, i) => keys[(i + seed) % keys.length] as string);
  const ordered = seed % 2 === 1 ? rotated.reverse() : rotated;
  const out: JsonObject = {};
  for (const key of ordered) {
    const field = value[key] as JsonValue;
    const inner = Array.isArray(field)
      ? field.map((entry) => (isJsonObject(entry) ? reordered(entry, seed + 1) : entry))
      : field;
    setOwn(out, key, inner);
  }
  return out;
}
