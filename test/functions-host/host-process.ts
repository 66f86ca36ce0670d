import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { freePorts as distinctFreePorts } from "../../laptop/http/free-ports.js";
import { AZURITE_ACCOUNT_KEY } from "../../laptop/stand-ins/azurite.js";

const ROOT = join(import.meta.dirname, "../..");
const SAMPLE = JSON.parse(readFileSync(join(ROOT, "local.settings.sample.json"), "utf8")) as {
  Values: Record<string, string>;
};
/** Azurite's public development key: it works only against the emulator. */

/**
 * The app as a user has it after `npm run build`: package.json, host.json, infra/, node_modules and web/ of
 * this repository, the app built into its own dist/, and a local.settings.json of the test's.
 */
export interface BuiltApp {
  readonly root: string;
  /** Node's arguments that run the CLI (`sas`) from source. */
  readonly cli: readonly string[];
  remove(): void;
}

/** What a test file of `sas host` shares: the app, built once; the hosts and data folders each test leaves. */
export interface HostFixture {
  /** The built app, once the file's `beforeAll` ran. */
  built(): BuiltApp;
  /** The hosts a test started, stopped after it, last started first (a second host uses the first's stand-ins). */
  readonly hosts: RunningHost[];
  /** A data folder for a host, removed after the test. */
  dataFolder(): string;
}

/** Called at the top of a test file; `before` runs first (e.g. building the extension host). */
export function useBuiltApp(before?: () => Promise<void>): HostFixture {
  let app: BuiltApp | undefined;
  const hosts: RunningHost[] = [];
  const folders: string[] = [];
  beforeAll(async () => {
    await before?.();
    app = buildApp();
  }, 600_000);
  afterEach(async () => {
    for (const host of hosts.splice(0).reverse()) await host.stop();
    // Azurite, started by the host, may still be writing as it exits.
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true, maxRetries: 10 });
  }, 120_000);
  afterAll(() => app?.remove());
  return {
    built: () => {
      if (!app) throw new Error("no app was built");
      return app;
    },
    hosts,
    dataFolder: () => {
      const folder = mkdtempSync(join(tmpdir(), "sas-host-data-"));
      folders.push(folder);
      return folder;
    },
  };
}

export function buildApp(): BuiltApp {
  const root = mkdtempSync(join(tmpdir(), "sas-host-app-"));
  for (const entry of ["package.json", "host.json", "infra", "node_modules", "web"]) {
    symlinkSync(join(ROOT, entry), join(root, entry));
  }
  execFileSync(
    process.execPath,
    [
      join(ROOT, "node_modules/typescript/bin/tsc"),
      "-p",
      "tsconfig.build.json",
      "--outDir",
      join(root, "dist"),
    ],
    { cwd: ROOT, stdio: "pipe" },
  );
  return {
    root,
    cli: ["--import", "tsx", join(ROOT, "laptop/cli/main.ts")],
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface HostPorts {
  readonly http: number;
  readonly serviceBus: number;
  readonly cosmos: number;
  readonly blob: number;
  readonly partner: number;
  /** The storefront's, given as --store-port (the default 7080 may be taken on a shared machine). */
  readonly store: number;
}

export function freePorts(): Promise<HostPorts> {
  return distinctFreePorts(["http", "serviceBus", "cosmos", "blob", "partner", "store"]);
}

/** The sample settings pointed at stand-ins on the given ports, without a SQL Server connection. */
export function writeLocalSettings(app: BuiltApp, ports: HostPorts, overrides: Record<string, string> = {}) {
  const values: Record<string, string> = {
    ...SAMPLE.Values,
    ServiceBusConnection: `Endpoint=sb://localhost:${ports.serviceBus};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;`,
    CosmosDb__endpoint: `https://localhost:${ports.cosmos}/`,
    CosmosDb__key: "stand-in-accepts-any-key",
    AzureWebJobsStorage: `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${ports.blob}/devstoreaccount1;`,
    PARTNER_URL: `http://127.0.0.1:${ports.partner}`,
    STARTER_SCHEDULE: "*/2 * * * * *",
    SUPERVISOR_SCHEDULE: "*/3 * * * * *",
    ...overrides,
  };
  delete values.OrdersSql;
  writeFileSync(
    join(app.root, "local.settings.json"),
    JSON.stringify({ IsEncrypted: false, Values: values }, null, 2),
  );
}

export interface RunningHost {
  readonly child: ChildProcess;
  readonly url: string;
  /** The storefront's base URL, or null when the host was started without one. */
  readonly storeUrl: string | null;
  readonly functionKey: string;
  readonly masterKey: string;
  stdout(): string;
  stderr(): string;
  /** Log lines (JSON) the host and the app wrote so far. */
  events(): Record<string, unknown>[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `sas host` from the built app's root and resolves once it says where its functions are; with
 * the storefront on `ports.store` unless `store` is false (`--no-store`), and the orchestrations on the
 * local durable runtime unless `durable` names the extension (the default where .NET is installed).
 * Its log's lines of `logLevel` and above come to its standard error (`--log-level`; null: none);
 * `summary` false passes `--no-summary`.
 */
export function startHost(
  app: BuiltApp,
  ports: HostPorts,
  data: string,
  {
    timeoutMs = 60_000,
    store = true,
    durable = "local",
    logLevel = "info",
    summary = true,
  }: {
    readonly timeoutMs?: number;
    readonly store?: boolean;
    readonly durable?: "local" | "extension";
    readonly logLevel?: "debug" | "info" | "warn" | "error" | null;
    readonly summary?: boolean;
  } = {},
): Promise<RunningHost> {
  const storeFlags = store ? ["--store-port", String(ports.store)] : ["--no-store"];
  const args = [...app.cli, "host", "--port", String(ports.http), "--data", data, "--durable", durable];
  args.push(
    ...storeFlags,
    ...(logLevel ? ["--log-level", logLevel] : []),
    ...(summary ? [] : ["--no-summary"]),
  );
  const child = spawn(process.execPath, args, { cwd: app.root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const events = () =>
    `${stdout}\n${stderr}`
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`sas host did not start within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, timeoutMs);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`sas host exited with ${code}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
    const watch = () => {
      const ready = /sas host: functions on (\S+)\/api/.exec(stdout);
      const keys = /function key (\S+), master key (\S+) /.exec(stdout);
      if (!ready?.[1] || !keys?.[1] || !keys[2]) return;
      clearTimeout(timer);
      child.stdout?.off("data", watch);
      resolve({
        child,
        url: ready[1],
        storeUrl: /sas host: storefront on (\S+?)\/?\n/.exec(stdout)?.[1] ?? null,
        functionKey: keys[1],
        masterKey: keys[2],
        stdout: () => stdout,
        stderr: () => stderr,
        events,
        stop: async (signal = "SIGTERM") => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const stuck = setTimeout(() => child.kill("SIGKILL"), 15_000);
          const code = await exited;
          clearTimeout(stuck);
          return code;
        },
      });
    };
    child.stdout?.on("data", watch);
  });
}

/** `sas send` from the app's root, as a user runs it against `func start`. */
export function sendOrders(
  app: BuiltApp,
  count: number,
  seed: number,
): { sent: number; firstOrderId: string } {
  const out = execFileSync(
    process.execPath,
    [...app.cli, "send", "--count", String(count), "--seed", String(seed)],
    {
      cwd: app.root,
      encoding: "utf8",
    },
  );
  return JSON.parse(out) as { sent: number; firstOrderId: string };
}

/** The ids `sas send --seed <seed>` gives its orders. */
export function orderIds(seed: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `send-${seed.toString(36)}-${String(i).padStart(6, "0")}`);
}

/** `sas orders ...` (or `sas stats`) against the running host, as a user runs it: exit status and output. */
export function sasOrders(app: BuiltApp, host: RunningHost, args: readonly string[]) {
  const result = spawnSync(process.execPath, [...app.cli, ...args, "--url", host.url], {
    cwd: app.root,
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
