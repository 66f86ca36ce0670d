import { randomBytes } from "node:crypto";

/**
 * `bytes` random bytes as base64url text that does not begin with "-": a key is given on command lines
 * as `--key <key>`, and a value starting with a dash reads as another flag there.
 */
export function newAccessKey(bytes: number): string {
  for (;;) {
    const key = randomBytes(bytes).toString("base64url");
    if (!key.startsWith("-")) return key;
  }
}
