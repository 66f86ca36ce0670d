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
  /**
   * What this process last sealed or opened in each context. A record is written again and again with
   * the same references; sealing each afresh and opening the same value on every read cost the embedded
   * host a sixth of its throughput. An unchanged value keeps its ciphertext, which is what is stored anyway.
   */
  private readonly recent = new Map<string, { readonly plain: string; readonly sealed: string }>();

  constructor(
    private readonly ring: KeyRing,
    private readonly recentLimit = 10_000,
  ) {
    this.byId = new Map(ring.keys.map((key) => [key.id, key.key]));
  }

  seal(plain: string, context: string): string {
    const known = this.recent.get(context);
    if (known?.plain === plain && this.keyIdOf(known.sealed) === this.ring.current.id) return known.sealed;
    const sealed = this.encrypt(plain, context);
    this.remember(context, plain, sealed);
    return sealed;
  }

  open(stored: string, context: string): string {
    if (!this.isSealed(stored)) return stored;
    const known = this.recent.get(context);
    if (known?.sealed === stored) return known.plain;
    const plain = this.decrypt(stored, context);
    this.remember(context, plain, stored);
    return plain;
  }

  isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  private keyIdOf(sealed: string): string {
    return sealed.slice(PREFIX.length).split(".")[0] ?? "";
  }

  private remember(context: string, plain: string, sealed: string): void {
    this.recent.delete(context);
    this.recent.set(context, { plain, sealed });
    if (this.recent.size <= this.recentLimit) return;
    const oldest = this.recent.keys().next();
    if (!oldest.done) this.recent.delete(oldest.value);
  }

  private encrypt(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.ring.current.key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64url");
    return `${PREFIX}${this.ring.current.id}.${sealed}`;
  }

  private decrypt(stored: string, context: string): string {
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
}
