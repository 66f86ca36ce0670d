/**
 * The order message's public contract, written from the table in docs/order-message.md rather than
 * taken from the schema under test, so that the fuzzer's idea of valid and invalid is its own.
 */
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const ALPHANUMERIC = [...`${LETTERS}0123456789`];
export const IDENTIFIER_CHARS = [...ALPHANUMERIC, "-", "_", ".", ":"];
export const QUEUE_NAME_CHARS = [...ALPHANUMERIC, "-", "_", ".", "/", "~"];
export const CAPITALS = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"];

export const MAX_IDENTIFIER = 64;
export const MAX_REPLY_TO = 260;
export const MAX_ITEMS = 100;
export const QUANTITY = { min: 1, max: 1_000 } as const;
export const UNIT_PRICE = { min: 0, max: 100_000_000 } as const;
export const MAX_MESSAGE_BYTES = 64 * 1024;

export const TOP_FIELDS = ["schemaVersion", "orderId", "customerId", "currency", "items", "replyTo"] as const;
export const REQUIRED_TOP_FIELDS = ["schemaVersion", "orderId", "customerId", "currency", "items"] as const;
export const ITEM_FIELDS = ["sku", "quantity", "unitPriceMinor"] as const;

export type TopField = (typeof TOP_FIELDS)[number];
export type ItemField = (typeof ITEM_FIELDS)[number];
export type TextField = "orderId" | "customerId" | "currency" | "replyTo" | "sku";
export type NumberField = "schemaVersion" | "quantity" | "unitPriceMinor";

const IDENTIFIER = /^[A-Za-z0-9\-_.:]{1,64}$/;
const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9\-_./~]{0,259}$/;
const CURRENCY = /^[A-Z]{3}$/;

/** Whether `value` is a valid value of the text field `field`. */
export function validText(field: TextField, value: string): boolean {
  if (field === "currency") return CURRENCY.test(value);
  if (field === "replyTo") return QUEUE_NAME.test(value);
  return IDENTIFIER.test(value);
}

/** Whether `value` is a valid value of the number field `field`. */
export function validNumber(field: NumberField, value: number): boolean {
  if (field === "schemaVersion") return value === 1;
  const range = field === "quantity" ? QUANTITY : UNIT_PRICE;
  return Number.isInteger(value) && value >= range.min && value <= range.max;
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
