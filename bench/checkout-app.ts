/**
 * A checkout's Azure Functions app as a user has it after `npm run build`, in a folder of its own so
 * that the checkout is left untouched: its package.json, host.json, infra/, node_modules and web/
 * linked, the app built into the folder's dist/ by the checkout's own compiler and build settings,
 * and a local.settings.json from the checkout's sample with the settings given. Its `sas host` and
 * `sas send` are the checkout's CLI, wherever that checkout keeps it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Where a checkout keeps its CLI: this layout's, else the one before the move to laptop/. */
const CLI_LAYOUTS = [
  { cli: "laptop/cli/main.ts", hostCommand: "laptop/cli/host-command.ts" },
  { cli: "src/local/cli.ts", hostCommand: "src/local/cli.ts" },
] as const;

export interface CheckoutLayout {
  /** The CLI's entry point, a path inside the checkout. */
  readonly cli: string;
  /**
   * Flags `sas host` needs besides the ports and the data folder: no storefront, where it has one; the
   * local durable engine, where it has a choice, so that every commit is measured on the same engine;
   * no live summary, where it shows one, since its reads of the statistics are not the app's work.
   */
  readonly hostFlags: readonly string[];
}

export function layoutOf(checkout: string): CheckoutLayout {
  const layout = CLI_LAYOUTS.find((candidate) => existsSync(join(checkout, candidate.cli)));
  if (!layout) {
    throw new Error(`${checkout}: no sas CLI found (${CLI_LAYOUTS.map((l) => l.cli).join(" or ")})`);
  }
  const hostSource = readFileSync(join(checkout, layout.hostCommand), "utf8");
  const hostFlags = [
    ...(hostSource.includes('"no-store"') ? ["--no-store"] : []),
    ...(hostSource.includes("durable: {") ? ["--durable", "local"] : []),
    ...(hostSource.includes('"no-summary"') ? ["--no-summary"] : []),
  ];
  return { cli: layout.cli, hostFlags };
}

const LINKED = ["package.json", "host.json", "infra", "node_modules", "web"];

/** Builds the checkout's app into `root` (an empty folder) with links to what the app reads at run time. */
export function buildApp(checkout: string, root: string): void {
  for (const entry of LINKED) {
    if (existsSync(join(checkout, entry))) symlinkSync(join(checkout, entry), join(root, entry));
  }
  const tsc = join(checkout, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", join(root, "dist")], {
      cwd: checkout,
      stdio: "pipe",
    });
  } catch (error) {
    const output = String((error as { stdout?: Buffer }).stdout ?? "").trim();
    throw new Error(`${checkout}: npm run build failed\n${output.split("\n").slice(0, 10).join("\n")}`);
  }
}

/** local.settings.json in `root`: the checkout's sample, these settings over it, and no SQL Server. */
export function writeLocalSettings(checkout: string, root: string, settings: Record<string, string>): void {
  const sample = JSON.parse(readFileSync(join(checkout, "local.settings.sample.json"), "utf8")) as {
    Values: Record<string, string>;
  };
  const values: Record<string, string> = { ...sample.Values, ...settings };
  // No SQL Server here: sas host then keeps the orders table in SQLite.
  delete values.OrdersSql;
  writeFileSync(join(root, "local.settings.json"), JSON.stringify({ IsEncrypted: false, Values: values }));
}
