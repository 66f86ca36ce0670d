// The engines yardstick's rows: `sas host` on the local engine and on Microsoft's Durable Task extension,
// side by side, each figure the median of its engine's runs. Pure: bench-report.ts renders the rows.
import type { EngineName, EngineRun } from "./engine-run.js";
import type { EnginesResult } from "./engines.js";

export interface EngineLine {
  readonly figure: string;
  readonly value: string;
  readonly floor?: string;
  /** Held to a floor: met or not; "not run" when the yardstick could not run here. */
  readonly verdict?: "pass" | "missed" | "not run";
}

export const ENGINES_DURABILITY =
  "sas host, built app; extension: Azure Storage backend on Azurite; local: SQLite file, WAL";

const ENGINES: readonly EngineName[] = ["local", "extension"];
const LABEL: Record<EngineName, string> = { local: "local", extension: "extension" };

export function engineLines(result: EnginesResult): EngineLine[] {
  if (result.notRun !== undefined) {
    return [{ figure: "sas host on both engines", value: `not run: ${result.notRun}`, verdict: "not run" }];
  }
  const of = (engine: EngineName) => result.runs.filter((run) => run.engine === engine);
  const median = (engine: EngineName, figure: (run: EngineRun) => number) => medianOf(of(engine).map(figure));
  const side = (figure: (run: EngineRun) => number, unit: string, digits = 1) => {
    const [local, extension] = ENGINES.map((engine) => median(engine, figure)) as [number, number];
    return `${ENGINES.map((e, i) => `${LABEL[e]} ${fixed([local, extension][i] as number, digits)}`).join(" · ")} ${unit}; extension / local ${ratio(extension, local)}`;
  };
  const perOrder = (figure: (run: EngineRun) => number) => (run: EngineRun) => figure(run) / run.orders;
  return [
    {
      figure: `sas host, ${result.orders} orders a run, ${result.rounds} run(s) per engine taking turns: orders/s (median)`,
      value: side((run) => run.orders / run.seconds, "orders/s"),
    },
    {
      figure: "  each run, in the order run: seconds until all final",
      value: result.runs.map((run) => `${LABEL[run.engine]} ${run.seconds.toFixed(1)}`).join(", "),
    },
    {
      figure: "  CPU per order, the host's processes",
      value: `${side(perOrder(hostCpu), "ms")} (${ENGINES.map((e) => `${LABEL[e]}: ${processSplit(of(e))}`).join("; ")})`,
    },
    {
      figure: "  CPU per order, the stand-ins (not the host's)",
      value: ENGINES.map(
        (e) =>
          `${LABEL[e]}: Azurite ${fixed(
            median(
              e,
              perOrder((r) => r.cpu.azurite),
            ),
            2,
          )} ms, broker, Cosmos DB, partner and proxy ${fixed(
            median(
              e,
              perOrder((r) => r.cpu.benchStandIns),
            ),
            2,
          )} ms`,
      ).join(" · "),
    },
    {
      figure: "  history rows per order (extension: History table; local: df_history, one per episode)",
      value: side(
        perOrder((run) => run.historyRows),
        "rows",
      ),
    },
    effectsLine(result.runs),
    {
      figure: "  storage transactions per order (requests Azurite served)",
      value: ENGINES.map((e) => `${LABEL[e]} ${storageSplit(of(e))}`).join(" · "),
    },
    {
      figure: "  the extension's storage transactions per order, by operation",
      value: operations(of("extension")),
    },
    {
      figure: "  load average (1 min) before / after the sitting",
      value: `${result.load.before.toFixed(2)} / ${result.load.after.toFixed(2)}`,
    },
  ];
}

function hostCpu(run: EngineRun): number {
  return Object.values(run.cpu.host).reduce((sum, ms) => sum + ms, 0);
}

/** Each process name's share of the host's CPU per order, medians over the runs. */
function processSplit(runs: readonly EngineRun[]): string {
  const names = [...new Set(runs.flatMap((run) => Object.keys(run.cpu.host)))].sort();
  return names
    .map((name) => ({ name, ms: medianOf(runs.map((run) => (run.cpu.host[name] ?? 0) / run.orders)) }))
    .filter(({ ms }) => ms > 0)
    .map(({ name, ms }) => `${name} ${fixed(ms, 1)}`)
    .join(", ");
}

function storageSplit(runs: readonly EngineRun[]): string {
  const per = (figure: (run: EngineRun) => number) => medianOf(runs.map((run) => figure(run) / run.orders));
  const total = per((run) => run.storage.total);
  const parts = (["queue", "table", "blob"] as const).map(
    (service) =>
      `${service} ${fixed(
        per((run) => run.storage.byService[service]),
        1,
      )}`,
  );
  return `${fixed(total, 1)} (${parts.join(", ")})`;
}

/** The six operations with the most requests per order, medians over the runs. */
function operations(runs: readonly EngineRun[]): string {
  const kinds = [...new Set(runs.flatMap((run) => Object.keys(run.storage.byOperation)))];
  return kinds
    .map((kind) => ({
      kind,
      n: medianOf(runs.map((run) => (run.storage.byOperation[kind] ?? 0) / run.orders)),
    }))
    .sort((a, b) => b.n - a.n)
    .slice(0, 6)
    .map(({ kind, n }) => `${kind} ${fixed(n, 1)}`)
    .join(", ");
}

/** Every run of either engine: every order at the partner with each effect applied once, none twice. */
function effectsLine(runs: readonly EngineRun[]): EngineLine {
  const ok = (run: EngineRun) =>
    run.effects.duplicates === 0 && run.effects.once === run.orders && run.effects.orders === run.orders;
  return {
    figure: "  each effect applied once (the partner's ledger)",
    value: runs
      .map(
        (run) =>
          `${LABEL[run.engine]} ${run.effects.once} of ${run.orders}${run.effects.duplicates > 0 ? `, ${run.effects.duplicates} applied twice or more` : ""}`,
      )
      .join(", "),
    floor: "every order, every run",
    verdict: runs.length > 0 && runs.every(ok) ? "pass" : "missed",
  };
}

export function medianOf(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "–";
}

function ratio(a: number, b: number): string {
  return Number.isFinite(a / b) && b !== 0 ? (a / b).toFixed(2) : "–";
}
