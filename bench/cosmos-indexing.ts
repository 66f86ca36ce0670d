/**
 * The index terms a document adds under a container's indexing policy, as Cosmos DB's write charge
 * counts them (bench/cosmos-cost.ts): one per value at an indexed path, and one per composite index
 * whose paths the document all has. Each term is its path with the value it indexes, so two versions
 * of a document can be compared for the terms a replace removes and adds.
 */

interface IndexPath {
  readonly path: string;
}

/** The parts of a container's `indexingPolicy` that decide what is indexed. */
export interface IndexingPolicy {
  readonly indexingMode?: string;
  readonly includedPaths?: readonly IndexPath[];
  readonly excludedPaths?: readonly IndexPath[];
  readonly compositeIndexes?: readonly (readonly IndexPath[])[];
}

/** A container created without a policy indexes every path. */
const DEFAULT_POLICY: IndexingPolicy = { includedPaths: [{ path: "/*" }] };

/** Properties the service adds to every document; the client does not send them. */
const SYSTEM_PROPERTY = /^_(rid|self|etag|attachments|ts)$/;

/** A leaf of a document: its path's segments (`[]` for an array element) and its value, as JSON. */
interface Leaf {
  readonly segments: readonly string[];
  readonly value: string;
}

function leaves(value: unknown, segments: readonly string[] = []): Leaf[] {
  if (Array.isArray(value)) return value.flatMap((item) => leaves(item, [...segments, "[]"]));
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, child]) =>
      segments.length === 0 && SYSTEM_PROPERTY.test(key) ? [] : leaves(child, [...segments, key]),
    );
  }
  return [{ segments, value: JSON.stringify(value) }];
}

/** A policy path's segments and whether it covers a whole subtree (`/*`) or one value (`/?`). */
function parsePath(path: string): { readonly segments: readonly string[]; readonly subtree: boolean } {
  const segments = path.split("/").filter((segment) => segment !== "");
  const last = segments[segments.length - 1];
  if (last === "*") return { segments: segments.slice(0, -1), subtree: true };
  if (last === "?") return { segments: segments.slice(0, -1), subtree: false };
  return { segments, subtree: false };
}

/** How precisely `path` covers `leaf`: the segments it matched, or -1 when it does not cover it. */
function precision(path: string, leaf: Leaf): number {
  const { segments, subtree } = parsePath(path);
  if (subtree ? leaf.segments.length < segments.length : leaf.segments.length !== segments.length) return -1;
  return segments.every((segment, i) => segment === leaf.segments[i]) ? segments.length : -1;
}

/** The more precise of an included and an excluded path decides; a tie excludes. */
function isIndexed(leaf: Leaf, policy: IndexingPolicy): boolean {
  const best = (paths: readonly IndexPath[] | undefined) =>
    Math.max(-1, ...(paths ?? []).map((p) => precision(p.path, leaf)));
  const included = best(policy.includedPaths);
  return included >= 0 && included > best(policy.excludedPaths);
}

/** The document's index terms under `policy` (every path indexed when it is undefined). */
export function indexTerms(document: unknown, policy: IndexingPolicy = DEFAULT_POLICY): Set<string> {
  const terms = new Set<string>();
  if (policy.indexingMode === "none") return terms;
  const all = leaves(document);
  const pathOf = (leaf: Leaf) => `/${leaf.segments.join("/")}`;
  for (const leaf of all) if (isIndexed(leaf, policy)) terms.add(`${pathOf(leaf)}=${leaf.value}`);
  (policy.compositeIndexes ?? []).forEach((composite, i) => {
    const values = composite.map(({ path }) => all.find((leaf) => pathOf(leaf) === path)?.value);
    if (values.every((value) => value !== undefined)) terms.add(`composite ${i}=${values.join(",")}`);
  });
  return terms;
}

/** The terms a replace of `before` by `after` removes and adds: a changed value is one of each. */
export function termChanges(before: ReadonlySet<string>, after: ReadonlySet<string>): number {
  let changes = 0;
  for (const term of after) if (!before.has(term)) changes++;
  for (const term of before) if (!after.has(term)) changes++;
  return changes;
}
