/**
 * The work yardstick's figures as `npm run bench` reports them: per order, for the embedded host and
 * for the Azure path, and the capacity and cost table of the generated page. Pure.
 */
import type { AzureWork } from "./azure-work.js";
import type { WorkResult } from "./work.js";
import type { DurableWork } from "./work-counts.js";

/** A figure without a floor, and how its run kept its data. */
export interface WorkLine {
  readonly figure: string;
  readonly value: string;
  readonly durability: string;
}

export const AZURE_DURABILITY =
  "sas host; Cosmos DB and Service Bus: stand-ins the bench counts; durable store: SQLite file";

/** The order a container's requests are listed in; a kind not named here comes after, by name. */
const OPERATION_ORDER = [
  "read",
  "create",
  "replace",
  "upsert",
  "patch",
  "batch",
  "delete",
  "query",
  "readFeed",
];
/** Successful writes to the state container: each is a state-record write (a batch writes the record once). */
const RECORD_WRITES = ["create", "replace", "upsert", "patch", "batch"];

export function workLines(work: WorkResult): WorkLine[] {
  return [...embeddedLines(work), ...azureLines(work.azure)];
}

function embeddedLines({ embedded }: WorkResult): WorkLine[] {
  const each = (n: number) => fixed(n / embedded.orders);
  const line = (figure: string, value: string): WorkLine => ({
    figure,
    value,
    durability: embedded.durability,
  });
  return [
    line(
      `embedded host (sas demo), ${count(embedded.orders)} orders: ${DURABLE_WORK}`,
      durableWork(embedded.durable, embedded.orders),
    ),
    line("  durable history per order", history(embedded.durable, embedded.orders)),
    line(
      "  state-record writes per order",
      embedded.durable.stateWrites === null
        ? "not counted: no audit table"
        : `${each(embedded.durable.stateWrites)}, the create included`,
    ),
    line("  partner calls per order", each(embedded.partnerCalls)),
    line("  SQLite rows written per order", each(embedded.rowsWritten)),
  ];
}

const DURABLE_WORK = "activities / timers / episodes per order";

function durableWork(work: DurableWork, orders: number): string {
  return [work.activities, work.timers, work.episodes].map((n) => fixed(n / orders)).join(" / ");
}

function history(work: DurableWork, orders: number): string {
  return `${fixed(work.historyEvents / orders)} events, ${count(work.historyBytes / orders)} bytes, in ${fixed(work.episodes / orders)} rows (one per episode)`;
}

function azureLines(azure: AzureWork): WorkLine[] {
  const each = (n: number) => fixed(n / azure.orders);
  const line = (figure: string, value: string): WorkLine => ({ figure, value, durability: AZURE_DURABILITY });
  const { cosmos } = azure;
  const states = Object.entries(azure.states).map(([state, n]) => `${count(n)} ${state}`);
  return [
    line(
      `Azure path (sas host), ${count(azure.orders)} orders: ${DURABLE_WORK}`,
      azure.durable ? durableWork(azure.durable, azure.orders) : "not counted: no durable store read",
    ),
    ...(azure.durable ? [line("  durable history per order", history(azure.durable, azure.orders))] : []),
    line(
      "  state-record writes per order (successful writes to the state container)",
      each(recordWrites(azure)),
    ),
    line(
      "  Cosmos DB requests per order",
      `${each(cosmos.requests)}, ${decimal(cosmos.requestUnitsEstimate / azure.orders)} RU (estimate)`,
    ),
    ...containers(cosmos.byKind).map((container) =>
      line(
        `  Cosmos DB, ${CONTAINER_NAMES[container] ?? `${container} container`}, per order`,
        containerRequests(azure, container),
      ),
    ),
    line(
      "  Cosmos DB document bytes written per order",
      Object.entries(cosmos.bytesWritten)
        .map(([container, bytes]) => `${container} ${count(bytes / azure.orders)}`)
        .join(", ") || "none",
    ),
    line(
      "  Service Bus operations per order",
      azure.serviceBus ? serviceBusOperations(azure) : "not counted",
    ),
    line("  partner calls per order", azure.partnerCalls === null ? "not counted" : each(azure.partnerCalls)),
    line(
      "  the run",
      `every order final in ${decimal(azure.seconds)} s (${states.join(", ")}); the stand-ins run in the bench's process`,
    ),
  ];
}

/** `records.replace` → ["records", "replace"]; `records.replace.412` → ["records", "replace", "412"]. */
function kindParts(kind: string): [string, string, string | undefined] {
  const [container = "", operation = "", status] = kind.split(".");
  return [container, operation, status];
}

export function recordWrites(azure: AzureWork): number {
  return Object.entries(azure.cosmos.byKind)
    .filter(([kind]) => {
      const [container, operation, status] = kindParts(kind);
      return container === "records" && status === undefined && RECORD_WRITES.includes(operation);
    })
    .reduce((sum, [, n]) => sum + n, 0);
}

/** What the counts' labels stand for (bench/cosmos-requests.ts), in the order they are listed. */
const CONTAINER_NAMES: Readonly<Record<string, string>> = {
  records: "state container, order records",
  tombstones: "state container, tombstones",
  breakers: "state container, circuit breakers",
  recovery: "recovery index",
};

/** The containers (or documents) the requests went to, in that order; metadata requests are none. */
function containers(byKind: Readonly<Record<string, number>>): string[] {
  const labels = Object.keys(byKind)
    .filter((kind) => kind !== "metadata")
    .map((kind) => kindParts(kind)[0]);
  const known = Object.keys(CONTAINER_NAMES);
  const rank = (name: string) => known.indexOf(name) + 1 || known.length + 1;
  return [...new Set(labels)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** e.g. `read 1.00, create 1.00, replace 5.00; refused: read 404 2.64; 68.4 RU (estimate)`. */
export function containerRequests(azure: AzureWork, container: string): string {
  const { byKind, requestUnitsByKind } = azure.cosmos;
  const mine = Object.keys(byKind).filter((kind) => kindParts(kind)[0] === container);
  const rank = (kind: string) => {
    const at = OPERATION_ORDER.indexOf(kindParts(kind)[1]);
    return at === -1 ? OPERATION_ORDER.length : at;
  };
  mine.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const listed = (kinds: string[]) =>
    kinds.map(
      (kind) => `${kindParts(kind).slice(1).join(" ").trim()} ${fixed((byKind[kind] ?? 0) / azure.orders)}`,
    );
  const done = listed(mine.filter((kind) => kindParts(kind)[2] === undefined));
  const refused = listed(mine.filter((kind) => kindParts(kind)[2] !== undefined));
  const units = mine.reduce((sum, kind) => sum + (requestUnitsByKind[kind] ?? 0), 0) / azure.orders;
  return [
    done.join(", "),
    ...(refused.length > 0 ? [`refused: ${refused.join(", ")}`] : []),
    `${decimal(units)} RU (estimate)`,
  ]
    .filter((part) => part !== "")
    .join("; ");
}

/** e.g. `6.00: orders send 1.00, receive 1.00, complete 1.00; order-status send 3.00`. */
function serviceBusOperations(azure: AzureWork): string {
  const byKind = azure.serviceBus?.byKind ?? {};
  const queues = new Map<string, string[]>();
  for (const [kind, n] of Object.entries(byKind)) {
    const at = kind.lastIndexOf(".");
    const queue = kind.slice(0, at);
    queues.set(queue, [...(queues.get(queue) ?? []), `${kind.slice(at + 1)} ${fixed(n / azure.orders)}`]);
  }
  const listed = [...queues].map(([queue, operations]) => `${queue} ${operations.join(", ")}`);
  return `${fixed((azure.serviceBus?.operations ?? 0) / azure.orders)}: ${listed.join("; ")}`;
}

export interface CapacityLine {
  readonly figure: string;
  readonly value: string;
}

/** The page's capacity and cost table, from the Azure-path run. */
export function capacityLines(azure: AzureWork): CapacityLine[] {
  const perThousand = (n: number) => count((n * 1_000) / azure.orders);
  const unitsPerOrder = azure.cosmos.requestUnitsEstimate / azure.orders;
  const durable = azure.durable;
  return [
    {
      figure: "orders per second per 1,000 RU/s provisioned (estimate)",
      value: unitsPerOrder > 0 ? decimal(1_000 / unitsPerOrder) : "no request units spent",
    },
    { figure: "Cosmos DB requests per 1,000 orders", value: perThousand(azure.cosmos.requests) },
    {
      figure: "Cosmos DB request units per 1,000 orders (estimate)",
      value: perThousand(azure.cosmos.requestUnitsEstimate),
    },
    {
      figure: "Service Bus operations per 1,000 orders",
      value: azure.serviceBus ? perThousand(azure.serviceBus.operations) : "not counted",
    },
    ...(durable
      ? [
          { figure: "durable history events per 1,000 orders", value: perThousand(durable.historyEvents) },
          {
            figure: "orchestration episodes / activities / timers per 1,000 orders",
            value: [durable.episodes, durable.activities, durable.timers].map(perThousand).join(" / "),
          },
        ]
      : []),
    {
      figure: "partner calls per 1,000 orders",
      value: azure.partnerCalls === null ? "not counted" : perThousand(azure.partnerCalls),
    },
  ];
}

function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function decimal(n: number): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

function fixed(n: number): string {
  return n.toFixed(2);
}
