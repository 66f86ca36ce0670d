import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { type FieldCipher, type KeyRing, SealedValueError } from "../../ports/field-cipher.js";

const PREFIX = "enc1.";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM per field, `enc1.<keyId>.<base64url(iv | tag | ciphertext)>`: a fresh 96-bit IV per
 * value, the context as additional authenticated data, the key id in clear so a rotated ring still
 * opens what older keys sealed. A value without the prefix was stored in clear and is returned as it is.
 */
export class AesGcmFieldCipher implements FieldCipher {
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(private readonly ring: KeyRing) {
    this.byId = new Map(ring.keys.map((key) => [key.id, key.key]));
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.ring.current.key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64url");
    return `${PREFIX}${this.ring.current.id}.${sealed}`;
  }

  open(stored: string, context: string): string {
    if (!this.isSealed(stored)) return stored;
    const [keyId = "", body = ""] = stored.slice(PREFIX.length).split(".");
    const key = this.byId.get(keyId);
    if (!key) throw new SealedValueError(`no key ${keyId} in the ring opens this value`);
    const bytes = Buffer.from(body, "base64url");
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SealedValueError("the sealed value is truncated");
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new SealedValueError(
        `the value sealed under key ${keyId} was altered, or belongs to another field`,
      );
    }
  }

  isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }
}
