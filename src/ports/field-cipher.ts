export type { DataKey, KeyRing } from "../domain/key-ring.js";

/**
 * Encrypts single text fields for storage. `seal` binds the ciphertext to `context` (which record and
 * which field), so a sealed value copied to another field or record does not open. `open` takes a
 * sealed value, or a value stored in clear before protection began, which it returns as it is.
 */
export interface FieldCipher {
  seal(plain: string, context: string): string;
  open(stored: string, context: string): string;
  isSealed(stored: string): boolean;
}

/** A sealed value that cannot be opened: its key is not known, or it was altered or moved. */
export class SealedValueError extends Error {
  override readonly name = "SealedValueError";
}
