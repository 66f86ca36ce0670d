import type { SubQueueKind } from "./entity.js";

export const CBS_ADDRESS = "$cbs";
const MANAGEMENT_SUFFIX = "/$management";
const DEAD_LETTER_SUFFIX = "/$deadletterqueue";

export interface EntityAddress {
  /** The queue's name in lower case: Service Bus entity names are case-insensitive. */
  readonly queueKey: string;
  readonly kind: SubQueueKind;
}

/** What a link attaches to: the CBS node, an entity's management node, or the entity itself. */
export type LinkAddress =
  | { readonly node: "cbs" }
  | { readonly node: "management"; readonly entity: EntityAddress }
  | { readonly node: "entity"; readonly entity: EntityAddress };

export function parseAddress(address: string | undefined): LinkAddress | undefined {
  if (address === undefined || address === "") return undefined;
  if (address === CBS_ADDRESS) return { node: "cbs" };
  const lower = address.toLowerCase();
  if (lower.endsWith(MANAGEMENT_SUFFIX)) {
    return { node: "management", entity: entityAddress(lower.slice(0, -MANAGEMENT_SUFFIX.length)) };
  }
  return { node: "entity", entity: entityAddress(lower) };
}

function entityAddress(path: string): EntityAddress {
  if (path.endsWith(DEAD_LETTER_SUFFIX)) {
    return { queueKey: path.slice(0, -DEAD_LETTER_SUFFIX.length), kind: "deadLetter" };
  }
  return { queueKey: path, kind: "active" };
}
