import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KEY_FILE, localKeys, rotateKeyFile } from "../../laptop/embedded/key-file.js";
import { AesGcmFieldCipher } from "../../src/adapters/crypto/aes-gcm-field-cipher.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const path = mkdtempSync(join(tmpdir(), "sas-keys-"));
  folders.push(path);
  return path;
}
const NOW = new Date("2026-12-03T10:00:00Z");

describe("localKeys", () => {
  it("creates the key file on first start, readable by its owner only, and reads the same ring after", () => {
    const data = folder();
    const first = localKeys({}, data, NOW);
    expect(first.ring.current.id).toBe("k20261203");
    expect(first.ring.current.key).toHaveLength(32);
    expect(statSync(join(data, KEY_FILE)).mode & 0o077).toBe(0);
    const again = localKeys({}, data, new Date("2027-01-01T00:00:00Z"));
    expect(again.ring.current.key.equals(first.ring.current.key)).toBe(true);
    expect(again.text).toBe(readFileSync(join(data, KEY_FILE), "utf8").trim());
  });

  it("takes DATA_PROTECTION_KEYS when set, and a fresh random ring for a database in memory", () => {
    const data = folder();
    const given = `k9:${Buffer.alloc(32, 9).toString("base64")}`;
    expect(localKeys({ DATA_PROTECTION_KEYS: given }, data, NOW)).toMatchObject({
      text: given,
      source: "DATA_PROTECTION_KEYS",
    });
    expect(() => statSync(join(data, KEY_FILE))).toThrow();
    const a = localKeys({}, ":memory:", NOW);
    const b = localKeys({}, ":memory:", NOW);
    expect(a.ring.current.key.equals(b.ring.current.key)).toBe(false);
  });

  it("refuses a key file that holds no ring, naming the file", () => {
    const data = folder();
    writeFileSync(join(data, KEY_FILE), "not a key\n");
    expect(() => localKeys({}, data, NOW)).toThrow(new RegExp(`${KEY_FILE}: key 1 needs an id`));
  });
});

describe("rotateKeyFile (sas keys rotate)", () => {
  it("puts a new key in front; what the old key sealed still opens, new values are sealed under the new one", () => {
    const data = folder();
    const before = localKeys({}, data, NOW);
    const sealed = new AesGcmFieldCipher(before.ring).seal("pay-1", "ord-1/chargePayment/reference");
    expect(rotateKeyFile(data, new Date("2027-02-01T00:00:00Z"))).toEqual(["k20270201", "k20261203"]);
    const after = localKeys({}, data, NOW);
    const cipher = new AesGcmFieldCipher(after.ring);
    expect(cipher.open(sealed, "ord-1/chargePayment/reference")).toBe("pay-1");
    expect(cipher.seal("pay-2", "ord-2/chargePayment/reference")).toMatch(/^enc1\.k20270201\./);
    expect(statSync(join(data, KEY_FILE)).mode & 0o077).toBe(0);
  });

  it("refuses a folder without a key file, and a second rotation the same day, saying why", () => {
    expect(() => rotateKeyFile(folder(), NOW)).toThrow(/no key file to rotate/);
    const data = folder();
    localKeys({}, data, NOW);
    expect(() => rotateKeyFile(data, NOW)).toThrow(/already holds a key made today \(k20261203\)/);
  });
});
