import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DATA_PROTECTION_KEYS_SETTING, parseKeyRing } from "../../src/config/data-protection.js";
import { SettingsError } from "../../src/config/settings.js";
import type { KeyRing } from "../../src/ports/field-cipher.js";

export const KEY_FILE = "data-protection.keys";

export interface LocalKeys {
  /** The ring in the setting's format, for a host that hands it on as the setting. */
  readonly text: string;
  readonly ring: KeyRing;
  /** Where it came from, for the start-up banner. */
  readonly source: string;
}

/**
 * The key ring of a host on this machine: `DATA_PROTECTION_KEYS` when set; else the key file in the
 * data folder, created with one random key on first start (readable by its owner only); else, for a
 * database in memory, a random ring that dies with it. Losing the key file loses the sealed fields.
 */
export function localKeys(
  env: Readonly<Record<string, string | undefined>>,
  data: string,
  now: Date,
): LocalKeys {
  const given = env[DATA_PROTECTION_KEYS_SETTING]?.trim();
  if (given)
    return {
      text: given,
      ring: ringOf(given, DATA_PROTECTION_KEYS_SETTING),
      source: DATA_PROTECTION_KEYS_SETTING,
    };
  if (data === ":memory:") {
    const text = newKeyRingText(now);
    return { text, ring: ringOf(text, "a new key"), source: "a random key in memory" };
  }
  const path = join(data, KEY_FILE);
  if (!existsSync(path)) writeFileSync(path, `${newKeyRingText(now)}\n`, { mode: 0o600 });
  const text = readFileSync(path, "utf8").trim();
  return { text, ring: ringOf(text, path), source: path };
}

function ringOf(text: string, where: string): KeyRing {
  const ring = parseKeyRing(text, where);
  if (typeof ring === "string") throw new SettingsError([ring]);
  return ring;
}

/** A new ring of one random key, in the setting's format, under an id made of `date`. */
export function newKeyRingText(date: Date): string {
  const id = `k${date.toISOString().slice(0, 10).replaceAll("-", "")}`;
  return `${id}:${randomBytes(32).toString("base64")}`;
}

/**
 * Puts a new key in front of the key file's ring (`sas keys rotate`): new writes are sealed under it,
 * and the older keys stay to open what they sealed. Answers the new ring's key ids, newest first.
 */
export function rotateKeyFile(data: string, now: Date): readonly string[] {
  const path = join(data, KEY_FILE);
  if (!existsSync(path))
    throw new SettingsError([`${path}: no key file to rotate (a host makes one on first start)`]);
  const current = readFileSync(path, "utf8").trim();
  const ring = ringOf(current, path);
  const fresh = newKeyRingText(now);
  const [freshId = ""] = fresh.split(":");
  if (ring.keys.some((key) => key.id === freshId)) {
    throw new SettingsError([`${path}: already holds a key made today (${freshId}); rotate again tomorrow`]);
  }
  const rotated = `${fresh},${current}`;
  writeFileSync(path, `${rotated}\n`, { mode: 0o600 });
  return ringOf(rotated, path).keys.map((key) => key.id);
}
