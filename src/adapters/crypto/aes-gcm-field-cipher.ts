import { createCipheriv, createDecipheriv, randomFillSync } from "node:crypto";
import { type FieldCipher, type KeyRing, SealedValueError } from "../../ports/field-cipher.js";

const PREFIX = "enc1.";
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** IVs drawn from the system's random source at once: one call per 512 values instead of one each. */
const IV_POOL_BYTES = IV_BYTES * 512;

/**
 * Fresh random IVs, read from the system's random source in bulk as Node's `randomUUID` does: a
 * `randomBytes(12)` per value cost a third of sealing. Each IV is handed out once: the pool is refilled,
 * overwriting every IV it held, only after the last was taken.
 */
class IvPool {
  private readonly pool = Buffer.allocUnsafe(IV_POOL_BYTES);
  private offset = IV_POOL_BYTES;

  /** The next IV, a view on the pool: use it before the next call, which may overwrite it. */
  next(): Buffer {
    if (this.offset + IV_BYTES > IV_POOL_BYTES) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const iv = this.pool.subarray(this.offset, this.offset + IV_BYTES);
    this.offset += IV_BYTES;
    return iv;
  }
}

/** One pool for every cipher of this process (each worker thread has its own). */
const ivs = new IvPool();

interface Remembered {
  readonly plain: string;
  readonly sealed: string;
  /** The id of the key that sealed it. */
  readonly keyId: string;
}

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
  private readonly recent = new Map<string, Remembered>();

  constructor(
    private readonly ring: KeyRing,
    private readonly recentLimit = 10_000,
  ) {
    this.byId = new Map(ring.keys.map((key) => [key.id, key.key]));
  }

  seal(plain: string, context: string): string {
    const known = this.recent.get(context);
    const keyId = this.ring.current.id;
    if (known?.plain === plain && known.keyId === keyId) return known.sealed;
    const sealed = this.encrypt(plain, context);
    this.remember(context, { plain, sealed, keyId });
    return sealed;
  }

  open(stored: string, context: string): string {
    if (!this.isSealed(stored)) return stored;
    const known = this.recent.get(context);
    if (known?.sealed === stored) return known.plain;
    const [keyId = "", body = ""] = stored.slice(PREFIX.length).split(".");
    const plain = this.decrypt(keyId, body, context);
    this.remember(context, { plain, sealed: stored, keyId });
    return plain;
  }

  isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  private remember(context: string, value: Remembered): void {
    this.recent.delete(context);
    this.recent.set(context, value);
    if (this.recent.size <= this.recentLimit) return;
    const oldest = this.recent.keys().next();
    if (!oldest.done) this.recent.delete(oldest.value);
  }

  private encrypt(plain: string, context: string): string {
    const iv = ivs.next();
    const cipher = createCipheriv("aes-256-gcm", this.ring.current.key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64url");
    return `${PREFIX}${this.ring.current.id}.${sealed}`;
  }

  private decrypt(keyId: string, body: string, context: string): string {
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
