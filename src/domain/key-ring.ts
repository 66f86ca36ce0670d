/** A key of the ring: its id travels in every value it sealed, so older keys still open theirs. */
export interface DataKey {
  readonly id: string;
  /** 32 bytes: AES-256. */
  readonly key: Buffer;
}

/** The keys that open stored values; the first, `current`, seals new ones. */
export interface KeyRing {
  readonly current: DataKey;
  readonly keys: readonly DataKey[];
}
