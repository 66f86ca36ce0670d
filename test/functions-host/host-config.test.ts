import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostKeys, hostSettings, readHostJson, resolverOf } from "../../laptop/functions-host/host-config.js";
import { embeddedOrders } from "../../laptop/functions-host/sql-choice.js";
import { isoDurationMs } from "../../src/domain/time.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const path = mkdtempSync(join(tmpdir(), "sas-host-config-"));
  folders.push(path);
  return path;
}

describe("the host's settings", () => {
  it("are local.settings.json's Values under the environment's own", () => {
    const root = folder();
    writeFileSync(
      join(root, "local.settings.json"),
      JSON.stringify({ Values: { A: "file", B: "file", N: 3 } }),
    );
    expect(hostSettings(root, { B: "env", C: "env", D: undefined })).toEqual({
      A: "file",
      B: "env",
      C: "env",
      N: "3",
    });
    expect(hostSettings(folder(), { C: "env" })).toEqual({ C: "env" });
  });

  it("refuse a local.settings.json that is not JSON, or whose Values is not an object, naming the file", () => {
    const root = folder();
    writeFileSync(join(root, "local.settings.json"), "{ Values: ");
    expect(() => hostSettings(root, {})).toThrow(/local\.settings\.json: not JSON/);
    writeFileSync(join(root, "local.settings.json"), JSON.stringify({ Values: ["a"] }));
    expect(() => hostSettings(root, {})).toThrow(/Values must be an object/);
    writeFileSync(join(root, "local.settings.json"), JSON.stringify({ Values: "a" }));
    expect(() => hostSettings(root, {})).toThrow(/Values must be an object/);
  });

  it("resolve %NAME% in binding properties, and name a setting that is missing", () => {
    const resolve = resolverOf({ QUEUE: "orders", EVERY: "*/5 * * * * *" });
    expect(resolve("%QUEUE%")).toBe("orders");
    expect(resolve("plain")).toBe("plain");
    expect(() => resolve("%NOPE%")).toThrow(/NOPE: named by a binding as %NOPE% but not set/);
  });

  it("read host.json as this app's, with its task hub resolved", () => {
    const repoRoot = join(import.meta.dirname, "../..");
    expect(readHostJson(repoRoot, resolverOf({ TASKHUB_NAME: "Hub" }))).toEqual({
      hubName: "Hub",
      maxConcurrentActivityFunctions: 10,
      overridableExistingInstanceStates: "NonRunningStates",
      serviceBusMaxConcurrentCalls: 16,
      maxAutoLockRenewalDurationMs: 15 * 60_000,
    });
  });

  it("name overridableExistingInstanceStates in host.json with the value docs/functions-host.md gives, and say why", () => {
    const repoRoot = join(import.meta.dirname, "../..");
    const hostJson = JSON.parse(readFileSync(join(repoRoot, "host.json"), "utf8")) as {
      extensions: { durableTask: Record<string, unknown> };
    };
    expect(hostJson.extensions.durableTask.overridableExistingInstanceStates).toBe("NonRunningStates");
    const docs = readFileSync(join(repoRoot, "docs/functions-host.md"), "utf8").replace(/\s+/g, " ");
    expect(docs).toContain(
      "host.json sets `extensions.durableTask.overridableExistingInstanceStates` to `NonRunningStates`",
    );
    expect(docs).toMatch(/instance id is an attempt, `\$\{orderId\}:\$\{attempt\}`/);
  });

  it("read overridableExistingInstanceStates as the host binds it: either name in any case, the default when absent", () => {
    const read = (durableTask: Record<string, unknown>) => {
      const root = folder();
      writeFileSync(join(root, "host.json"), JSON.stringify({ extensions: { durableTask } }));
      return readHostJson(root, resolverOf({})).overridableExistingInstanceStates;
    };
    expect(read({})).toBe("NonRunningStates");
    expect(read({ overridableExistingInstanceStates: "anystate" })).toBe("AnyState");
    expect(read({ overridableExistingInstanceStates: "NonRunningStates" })).toBe("NonRunningStates");
    expect(() => read({ overridableExistingInstanceStates: "Running" })).toThrow(
      /overridableExistingInstanceStates must be NonRunningStates or AnyState; got "Running"/,
    );
  });

  it("keep the host's keys in the data folder, readable by its owner only", () => {
    const data = folder();
    const keys = hostKeys(data);
    expect(keys.functionKey).toMatch(/^[\w-]{40}$/);
    expect(keys.masterKey).not.toBe(keys.functionKey);
    expect(new Set([keys.functionKey, keys.masterKey, keys.durableTaskKey]).size).toBe(3);
    expect(hostKeys(data)).toEqual(keys);
    expect(JSON.parse(readFileSync(join(data, "host-keys.json"), "utf8"))).toEqual(keys);
    expect(statSync(join(data, "host-keys.json")).mode & 0o077).toBe(0);
    // A file from before the extension's key existed keeps its keys and gets that one added.
    writeFileSync(join(data, "host-keys.json"), '{"functionKey": "f-key", "masterKey": "m-key"}');
    const upgraded = hostKeys(data);
    expect(upgraded).toMatchObject({ functionKey: "f-key", masterKey: "m-key" });
    expect(upgraded.durableTaskKey).toMatch(/^[\w-]{40}$/);
    expect(hostKeys(data)).toEqual(upgraded);
    writeFileSync(join(data, "host-keys.json"), '{"functionKey": ""}');
    expect(() => hostKeys(data)).toThrow(/host-keys\.json: not the host's keys/);
  });
});

describe("the host's choice of orders table", () => {
  it("is the embedded one without a SQL connection", async () => {
    const choice = await embeddedOrders({}, "/data");
    expect(choice.file).toBe(join("/data", "orders.db"));
    expect(choice.note).toMatch(/no OrdersSql connection is set/);
  });

  it("is the file OrdersSql__sqliteFile names, a setting of the host's that the app never sees", async () => {
    const choice = await embeddedOrders(
      { OrdersSql__sqliteFile: "/elsewhere/orders.db", OrdersSql__server: "localhost" },
      "/data",
    );
    expect(choice.file).toBe("/elsewhere/orders.db");
    expect([...choice.removed].sort()).toEqual(["OrdersSql__server", "OrdersSql__sqliteFile"]);
  });

  it("is the embedded one when the SQL Server on this machine does not answer, the SQL settings removed", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const address = closed.address();
    const port = typeof address === "object" && address ? address.port : 0;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const settings = { OrdersSql: `Server=tcp:127.0.0.1,${port};Database=orders;User Id=sa;Password=x` };
    const choice = await embeddedOrders(settings, "/data");
    expect(choice.removed).toEqual(["OrdersSql"]);
    expect(choice.note).toMatch(new RegExp(`nothing answers at 127\\.0\\.0\\.1:${port}`));
  });

  it("keeps a SQL Server that answers, or one on another machine", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const local = await embeddedOrders({ OrdersSql: `Server=127.0.0.1,${port};Database=orders` }, "/data");
      expect(local).toMatchObject({ file: undefined, removed: [] });
      const remote = await embeddedOrders(
        { OrdersSql__server: "sql.example.net", OrdersSql__database: "o" },
        "/data",
      );
      expect(remote).toMatchObject({
        file: undefined,
        removed: [],
        note: expect.stringContaining("sql.example.net"),
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("isoDurationMs", () => {
  it.each([
    ["PT1M", 60_000],
    ["P1D", 86_400_000],
    ["PT30S", 30_000],
    ["P1DT2H3M4S", 93_784_000],
  ])("reads %s", (text, ms) => {
    expect(isoDurationMs(text)).toBe(ms);
  });

  it.each(["", "P", "PT", "1M", "PT1.5S", "P1W"])("refuses %j", (text) => {
    expect(() => isoDurationMs(text)).toThrow(/not a duration/);
  });
});
