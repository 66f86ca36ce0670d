import type { DataKey, KeyRing } from "../domain/key-ring.js";

/** The setting that holds the key ring; in Azure, a Key Vault reference to a secret holding it. */
export const DATA_PROTECTION_KEYS_SETTING = "DATA_PROTECTION_KEYS";

const KEY_ID = /^[A-Za-z0-9-]{1,32}$/;

/**
 * Reads a key ring written as `<id>:<base64 of 32 bytes>` entries separated by commas, the current key
 * first: rotating adds a new key in front and keeps the old ones until nothing sealed under them is
 * left. Answers the problem, naming `source` (the setting, or a key file), when the text is not one.
 */
export function parseKeyRing(text: string, source: string = DATA_PROTECTION_KEYS_SETTING): KeyRing | string {
  const keys: DataKey[] = [];
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  for (const [index, entry] of entries.entries()) {
    const at = entry.indexOf(":");
    const id = entry.slice(0, at);
    const key = Buffer.from(entry.slice(at + 1), "base64");
    if (at < 0 || !KEY_ID.test(id)) {
      return `${source}: key ${index + 1} needs an id of 1 to 32 letters, digits or -, then ":"`;
    }
    if (key.length !== 32) return `${source}: key ${id} is not 32 bytes of base64`;
    if (keys.some((known) => known.id === id)) return `${source}: key id ${id} is given twice`;
    keys.push({ id, key });
  }
  const current = keys[0];
  return current ? { current, keys } : `${source}: holds no key`;
}
