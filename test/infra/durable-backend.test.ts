/**
 * The durable backend chosen at deployment (`azd env set DURABLE_BACKEND dts`, default azureStorage), read from
 * the compiled template expanded once per backend: the Durable Task Scheduler and its task hub only with dts, the
 * app's role on it, its connection setting; and host.json's storage provider as the host and the scale controller
 * see it: the host.json the package carries for that backend (tools/function-app-package.ts), which no app
 * setting overrides.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newKeyRingText } from "../../laptop/embedded/key-file.js";
import { loadAzureSettings } from "../../src/config/azure-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import {
  DURABLE_BACKENDS,
  durableBackendOf,
  SCHEDULER_CONNECTION_SETTING as PACKAGED_CONNECTION_SETTING,
  packagedHostJson,
} from "../../tools/function-app-package.js";
import { Unresolved } from "./arm-expressions.js";
import { azdVariable } from "./azd-project.js";
import { type DeployedResource, expand, loadCompiledTemplate, MAIN_PARAMETERS } from "./compiled-template.js";
import {
  type AppSettings,
  coverageProblems,
  HOST_JSON_OVERRIDE,
  hostJsonOverrides,
  missingRoles,
  type RoleNeed,
  roleAssignments,
  SCHEDULER_CONNECTION_SETTING,
  secretProblems,
} from "./deployment-checks.js";

const root = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const hostJson = JSON.parse(read("host.json")) as Record<string, unknown>;

/** Durable Task Data Contributor: runs and manages orchestrations in a scheduler's task hubs. */
const DURABLE_TASK_DATA_CONTRIBUTOR = "0ad04412-c4d5-4796-b79c-f76d14c8d402";
const SCHEDULER = "Microsoft.DurableTask/schedulers";
const SCHEDULER_NEEDS: readonly RoleNeed[] = [
  { scope: SCHEDULER, role: DURABLE_TASK_DATA_CONTRIBUTOR, why: "the task hub's orchestrations" },
];

const compiled = loadCompiledTemplate();
const describeCompiled = "skipReason" in compiled ? describe.skip : describe;
const deployedWith = (durableBackend?: string) =>
  "template" in compiled
    ? expand(compiled.template, durableBackend ? { ...MAIN_PARAMETERS, durableBackend } : MAIN_PARAMETERS)
    : { deployments: [], resources: [] };

const shown = (value: unknown) => String(value instanceof Unresolved ? value.toString() : value);
const made = (resources: readonly DeployedResource[], type: string) =>
  resources.filter((r) => r.type === type && !r.existing && r.body.condition !== false);

function appSettingsOf(resources: readonly DeployedResource[]): Map<string, string> {
  const site = resources.find((r) => r.type === "Microsoft.Web/sites" && r.module === "function-app");
  if (!site) throw new Error("no Function App site in the template");
  const config = (site.body.properties as { siteConfig: { appSettings: { name: string; value: unknown }[] } })
    .siteConfig;
  return new Map(config.appSettings.map(({ name, value }) => [name, shown(value)]));
}

/**
 * host.json as the host reads it: each app setting `AzureFunctionsJobHost__a__b` replaces the value at path a.b
 * (the host's override of host.json by app settings).
 */
function effectiveHostJson(
  host: Readonly<Record<string, unknown>>,
  settings: AppSettings,
): Record<string, unknown> {
  const result = structuredClone(host) as Record<string, unknown>;
  for (const [name, value] of settings) {
    if (!HOST_JSON_OVERRIDE.test(name)) continue;
    const path = name.replace(HOST_JSON_OVERRIDE, "").split("__");
    let node = result;
    for (const key of path.slice(0, -1)) {
      if (typeof node[key] !== "object" || node[key] === null) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[path.at(-1) as string] = value;
  }
  return result;
}

/** The durable storage provider the host runs with: Azure Storage, the extension's default, when none is named. */
function storageProvider(host: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const durable = (host.extensions as { durableTask?: { storageProvider?: Record<string, unknown> } })
    ?.durableTask;
  return durable?.storageProvider ?? { type: "AzureStorage" };
}

/** The lowest version an extension bundle range `[4.32.0, 5.0.0)` accepts. */
function bundleFloor(range: string): number[] {
  const floor = /^\[(\d+)\.(\d+|\*)(?:\.(\d+))?/.exec(range);
  if (!floor) throw new Error(`not a bundle range: ${range}`);
  return [Number(floor[1]), floor[2] === "*" ? 0 : Number(floor[2]), Number(floor[3] ?? 0)];
}
const atLeast = (version: number[], wanted: number[]) => {
  for (const [i, part] of wanted.entries()) {
    if ((version[i] ?? 0) !== part) return (version[i] ?? 0) > part;
  }
  return true;
};

describe("F25-2: the package's host.json names the durable backend, and no app setting overrides it", () => {
  const packaged = (backend: (typeof DURABLE_BACKENDS)[number]) =>
    JSON.parse(packagedHostJson(read("host.json"), backend)) as Record<string, unknown>;

  it("dts: the scheduler, through the connection setting the Bicep sets; azureStorage: the default", () => {
    expect(storageProvider(packaged("dts"))).toEqual({
      type: "azureManaged",
      connectionStringName: PACKAGED_CONNECTION_SETTING,
    });
    expect(PACKAGED_CONNECTION_SETTING).toBe(SCHEDULER_CONNECTION_SETTING);
    expect(storageProvider(packaged("azureStorage"))).toEqual({ type: "AzureStorage" });
    // The rest of host.json is the project's, whichever the backend.
    const { extensions: _d, ...dtsRest } = packaged("dts");
    const { extensions: _a, ...projectRest } = hostJson;
    expect(dtsRest).toEqual(projectRest);
    expect((packaged("dts").extensions as { durableTask: unknown }).durableTask).toMatchObject(
      (hostJson.extensions as { durableTask: Record<string, unknown> }).durableTask,
    );
  });

  it("DURABLE_BACKEND, read when the package is made, picks it: unset is the Bicep's default, a typo stops", () => {
    expect(durableBackendOf({})).toBe("azureStorage");
    expect(durableBackendOf({ DURABLE_BACKEND: "dts" })).toBe("dts");
    expect(() => durableBackendOf({ DURABLE_BACKEND: "DTS" })).toThrow(
      /DURABLE_BACKEND: expected azureStorage or dts/,
    );
    const template = "template" in compiled ? compiled.template : undefined;
    if (template) {
      expect(template.parameters?.durableBackend?.defaultValue).toBe(durableBackendOf({}));
      expect(template.parameters?.durableBackend?.allowedValues).toEqual([...DURABLE_BACKENDS]);
    }
  });

  it.skipIf("skipReason" in compiled)("no app setting overrides host.json, with either backend", () => {
    for (const backend of DURABLE_BACKENDS) {
      expect(hostJsonOverrides(appSettingsOf(deployedWith(backend).resources)), backend).toEqual([]);
    }
  });

  it("the check fails on the settings that switched the provider before", () => {
    expect(
      hostJsonOverrides(
        new Map([
          ["AzureFunctionsJobHost__extensions__durableTask__storageProvider__type", "azureManaged"],
          ["TASKHUB_NAME", "Orders"],
        ]),
      ),
    ).toEqual([
      "AzureFunctionsJobHost__extensions__durableTask__storageProvider__type: overrides host.json, which the scale controller reads instead",
    ]);
  });
});

describe("host.json, for both backends", () => {
  it("names no storage provider, so Azure Storage is the default, and a bundle that knows the scheduler", () => {
    expect(storageProvider(hostJson)).toEqual({ type: "AzureStorage" });
    const bundle = (hostJson.extensionBundle as { id: string; version: string }).version;
    // The Durable Task Scheduler's provider (azureManaged) is in the extension bundle from 4.32.0.
    expect(atLeast(bundleFloor(bundle), [4, 32, 0])).toBe(true);
    expect(atLeast(bundleFloor("[4.*, 5.0.0)"), [4, 32, 0])).toBe(false);
  });

  it("reads an app setting AzureFunctionsJobHost__<path> in place of that path", () => {
    const host = effectiveHostJson(
      { extensions: { durableTask: { hubName: "%TASKHUB_NAME%" } } },
      new Map([["AzureFunctionsJobHost__extensions__durableTask__storageProvider__type", "azureManaged"]]),
    );
    expect(host).toEqual({
      extensions: { durableTask: { hubName: "%TASKHUB_NAME%", storageProvider: { type: "azureManaged" } } },
    });
  });
});

describeCompiled("compiled template: DURABLE_BACKEND", () => {
  const template = "template" in compiled ? compiled.template : undefined;

  it("is a parameter of two values, azureStorage by default, which main.parameters.json takes from the environment", () => {
    expect(template?.parameters?.durableBackend).toMatchObject({
      defaultValue: "azureStorage",
      allowedValues: ["azureStorage", "dts"],
    });
    const file = JSON.parse(read("infra/main.parameters.json")) as {
      parameters: Record<string, { value: string }>;
    };
    expect(file.parameters.durableBackend?.value).toBe(azdVariable("DURABLE_BACKEND=azureStorage"));
  });

  describe("azureStorage (the default)", () => {
    const { resources, deployments } = deployedWith();
    const settings = appSettingsOf(resources);

    it("makes no scheduler, task hub or role on one, and sets no scheduler setting", () => {
      expect(made(resources, SCHEDULER)).toEqual([]);
      expect(made(resources, `${SCHEDULER}/taskHubs`)).toEqual([]);
      const assignments = roleAssignments(resources, String(MAIN_PARAMETERS.principalId));
      expect(assignments.filter((a) => a.scope === SCHEDULER)).toEqual([]);
      expect(
        [...settings.keys()].filter((name) => /DURABLE_TASK|AzureFunctionsJobHost__/.test(name)),
      ).toEqual([]);
      const outputs = deployments.find((d) => d.module === "main")?.outputs ?? {};
      expect([outputs.AZURE_DURABLE_BACKEND, outputs.AZURE_DURABLE_TASK_DASHBOARD_URL]).toEqual([
        "azureStorage",
        "",
      ]);
    });

    it("leaves the task hub in the host's storage account", () => {
      expect(storageProvider(effectiveHostJson(hostJson, settings))).toEqual({ type: "AzureStorage" });
      for (const service of ["blob", "queue", "table"])
        expect(settings.has(`AzureWebJobsStorage__${service}ServiceUri`), service).toBe(true);
    });
  });

  describe("dts", () => {
    const { resources, deployments } = deployedWith("dts");
    const settings = appSettingsOf(resources);
    const outputs = deployments.find((d) => d.module === "main")?.outputs ?? {};

    it("makes a scheduler on the Consumption SKU reachable by role, and the task hub TASKHUB_NAME names", () => {
      const [scheduler, ...others] = made(resources, SCHEDULER);
      expect(others).toEqual([]);
      expect(scheduler?.apiVersion).toBe("2025-11-01");
      const properties = scheduler?.body.properties as { sku: unknown; ipAllowlist: string[] };
      expect(properties.sku).toEqual({ name: "Consumption" });
      // An empty allow list refuses every caller, the app included.
      expect(properties.ipAllowlist.length).toBeGreaterThan(0);
      const hubs = made(resources, `${SCHEDULER}/taskHubs`);
      expect(hubs.map((hub) => shown(hub.body.name).replace(/>$/, "").split("/").at(-1))).toEqual([
        settings.get("TASKHUB_NAME"),
      ]);
      expect(hostJson.extensions).toMatchObject({ durableTask: { hubName: "%TASKHUB_NAME%" } });
    });

    it("gives the app's identity Durable Task Data Contributor on it, and the deployer the same for the dashboard", () => {
      const assignments = roleAssignments(resources, String(MAIN_PARAMETERS.principalId));
      expect(missingRoles(assignments, "app", SCHEDULER_NEEDS)).toEqual([]);
      expect(missingRoles(assignments, "deployer", SCHEDULER_NEEDS)).toEqual([]);
      expect(
        assignments.filter((a) => a.scope === SCHEDULER).map((a) => [a.principal, a.principalType]),
      ).toEqual([
        ["app", "ServicePrincipal"],
        ["deployer", MAIN_PARAMETERS.principalType],
      ]);
      const without = assignments.filter((a) => a.role !== DURABLE_TASK_DATA_CONTRIBUTOR);
      expect(missingRoles(without, "app", SCHEDULER_NEEDS)).toHaveLength(1);
    });

    it("connects with the app's user-assigned identity: the endpoint and its client id, no key", () => {
      const connection = settings.get(SCHEDULER_CONNECTION_SETTING) ?? "";
      expect(connection).toMatch(
        /^<Endpoint=<reference\(.*'durable-task'.*\.outputs\.endpoint\.value>;Authentication=ManagedIdentity;ClientID=<reference\(.*'app-identity'.*\.outputs\.clientId\.value>>$/,
      );
      expect(connection).not.toMatch(/AccessKey|SharedAccess/i);
      expect(secretProblems(settings)).toEqual([]);
      expect(coverageProblems(settings)).toEqual([]);
    });

    it("leaves the app's own settings as they were: loadAzureSettings accepts them", () => {
      const env = Object.fromEntries(
        [...settings].map(([name, value]) => [
          name,
          name === DATA_PROTECTION_KEYS_SETTING
            ? newKeyRingText(new Date())
            : value.startsWith("<")
              ? /(Uri|endpoint|URL)$/i.test(name)
                ? "https://resource.example/"
                : "x"
              : value,
        ]),
      );
      expect(loadAzureSettings(env).pipeline.agentMode).toBe("activity");
    });

    it("outputs the scheduler's endpoint and its task hub's dashboard", () => {
      expect(outputs.AZURE_DURABLE_BACKEND).toBe("dts");
      expect(shown(outputs.AZURE_DURABLE_TASK_SCHEDULER_ENDPOINT)).toContain("'durable-task'");
      expect(shown(outputs.AZURE_DURABLE_TASK_DASHBOARD_URL)).toMatch(
        /'durable-task'.*\.outputs\.dashboardUrl\.value/,
      );
    });
  });
});
