/**
 * What would trip a first `azd up`, or the next one after `azd down`, and is not about one service: the region
 * (only those that offer Flex Consumption), the Key Vault held under its name for 90 days after `azd down` (the
 * preprovision hook, infra/scripts/key-vault-create-mode.sh, run with stand-ins for az and azd, has the Bicep
 * recover it), and the host's telemetry (OpenTelemetry, as the worker's).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { azdVariable } from "./azd-project.js";
import { expand, loadCompiledTemplate, MAIN_PARAMETERS } from "./compiled-template.js";

const root = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const compiled = loadCompiledTemplate();
const template = "template" in compiled ? compiled.template : undefined;

describe.skipIf("skipReason" in compiled)("the region", () => {
  const regions = (template?.parameters?.location?.allowedValues ?? []) as string[];

  it("is one that offers Flex Consumption: azd offers only those", () => {
    expect(regions.length).toBeGreaterThanOrEqual(20);
    expect(regions).toEqual([...new Set(regions)].sort());
    expect(regions).toContain(MAIN_PARAMETERS.location);
    // Canary regions (…euap) take no customer deployments.
    expect(regions.filter((region) => /euap$/.test(region))).toEqual([]);
    expect(regions.every((region) => /^[a-z]+[0-9]?$/.test(region))).toBe(true);
    const location = template?.parameters?.location as { metadata?: unknown } | undefined;
    expect(location?.metadata).toEqual({
      azd: { type: "location" },
      description: expect.any(String),
    });
  });
});

describe.skipIf("skipReason" in compiled)("the Key Vault after `azd down`", () => {
  const vaultWith = (keyVaultCreateMode?: string) => {
    if (!template) return undefined;
    const parameters = keyVaultCreateMode ? { ...MAIN_PARAMETERS, keyVaultCreateMode } : MAIN_PARAMETERS;
    const { resources } = expand(template, parameters);
    return resources.find((r) => r.type === "Microsoft.KeyVault/vaults" && !r.existing);
  };

  it("is created by default, recovered when the preprovision hook says so, with purge protection kept", () => {
    const created = vaultWith()?.body.properties as Record<string, unknown> | undefined;
    expect(created?.createMode).toBe("default");
    const recovered = vaultWith("recover")?.body.properties as Record<string, unknown> | undefined;
    expect([recovered?.createMode, recovered?.enablePurgeProtection]).toEqual(["recover", true]);
    expect(template?.parameters?.keyVaultCreateMode).toMatchObject({
      defaultValue: "default",
      allowedValues: ["default", "recover"],
    });
    const file = JSON.parse(read("infra/main.parameters.json")) as {
      parameters: Record<string, { value: string }>;
    };
    expect(file.parameters.keyVaultCreateMode?.value).toBe(azdVariable("KEY_VAULT_CREATE_MODE=default"));
  });

  it("is decided before every provision by the preprovision hook", () => {
    const hook = /preprovision:[\s\S]*?run:\s*(\S+)/.exec(read("azure.yaml"))?.[1] ?? "";
    expect(hook).toBe("./infra/scripts/preprovision.sh");
    expect([...read(hook).matchAll(/"\$script_dir\/([\w-]+\.sh)"/g)].map((m) => m[1])).toEqual([
      "key-vault-create-mode.sh",
    ]);
  });
});

describe("key-vault-create-mode.sh", () => {
  const script = join(root, "infra/scripts/key-vault-create-mode.sh");
  const bin = mkdtempSync(join(tmpdir(), "key-vault-create-mode-"));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  // az answers `keyvault list-deleted` with the names in $STUB_DELETED whose tag and region its --query asks
  // for (each entry `name,env,location`); azd records what it is told to set.
  writeFileSync(
    join(bin, "az"),
    `#!/bin/sh
echo "az $*" >> "$STUB_LOG"
[ -n "\${STUB_AZ_FAILS:-}" ] && { echo "Please run 'az login' to setup account." >&2; exit 1; }
query=""; while [ $# -gt 0 ]; do [ "$1" = "--query" ] && query=$2; shift; done
for entry in $STUB_DELETED; do
  name=\${entry%%,*}; rest=\${entry#*,}; env=\${rest%%,*}; location=\${rest#*,}
  case "$query" in *"=='$env' && properties.location=='$location'"*) echo "$name" ;; esac
done`,
  );
  writeFileSync(join(bin, "azd"), `#!/bin/sh\necho "azd $*" >> "$STUB_LOG"\n`);
  chmodSync(join(bin, "az"), 0o755);
  chmodSync(join(bin, "azd"), 0o755);

  function run(env: Record<string, string>) {
    const log = join(mkdtempSync(join(bin, "run-")), "calls.log");
    writeFileSync(log, "");
    const result = spawnSync("sh", [script], {
      encoding: "utf8",
      env: {
        PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
        STUB_LOG: log,
        STUB_DELETED: "",
        AZURE_ENV_NAME: "orders-dev",
        AZURE_LOCATION: "westeurope",
        AZURE_SUBSCRIPTION_ID: "sub-1",
        ...env,
      },
    });
    return { ...result, calls: readFileSync(log, "utf8").split("\n").filter(Boolean) };
  }

  it("has the Bicep create the vault when no deleted vault of this environment holds its name", () => {
    const result = run({
      STUB_DELETED: "kv-other,orders-test,westeurope kv-elsewhere,orders-dev,northeurope",
    });
    expect(result.status).toBe(0);
    expect(result.calls.filter((call) => call.startsWith("azd"))).toEqual([
      "azd env set KEY_VAULT_CREATE_MODE default",
    ]);
    expect(result.calls[0]).toContain("az keyvault list-deleted --subscription sub-1 --resource-type vault");
  });

  it("has it recover this environment's vault, deleted by `azd down` and held for 90 days, saying so", () => {
    const result = run({ STUB_DELETED: "kv-abc123,orders-dev,westeurope" });
    expect(result.status).toBe(0);
    expect(result.calls.filter((call) => call.startsWith("azd"))).toEqual([
      "azd env set KEY_VAULT_CREATE_MODE recover",
    ]);
    expect(result.stdout).toMatch(
      /kv-abc123 was deleted with this environment .* recovers it, with its secrets/,
    );
  });

  it("stops the provision when az cannot list deleted vaults, naming the subscription", () => {
    const result = run({ STUB_AZ_FAILS: "1" });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("cannot list the deleted Key Vaults of subscription sub-1");
    expect(result.calls.filter((call) => call.startsWith("azd"))).toEqual([]);
  });

  it("refuses to run outside azd, naming the variable", () => {
    const result = run({ AZURE_SUBSCRIPTION_ID: "" });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/AZURE_SUBSCRIPTION_ID/);
  });
});

/** What keeps host and worker telemetry from being sent twice and uncorrelated. */
function telemetryProblems(host: Readonly<Record<string, unknown>>, workerStartsDistro: boolean): string[] {
  const problems: string[] = [];
  if (workerStartsDistro && host.telemetryMode !== "OpenTelemetry")
    problems.push("the worker runs OpenTelemetry, but the host sends with the Application Insights SDK");
  const logging = host.logging as { applicationInsights?: unknown } | undefined;
  if (host.telemetryMode === "OpenTelemetry" && logging?.applicationInsights !== undefined)
    problems.push(
      "logging.applicationInsights is the Application Insights SDK's, unused in OpenTelemetry mode",
    );
  return problems;
}

describe("host.json's telemetry", () => {
  const host = JSON.parse(read("host.json")) as Record<string, unknown>;
  // The worker registers the Azure Monitor OpenTelemetry distro before anything else loads.
  const workerStartsDistro = /startAzureMonitor\(process\.env\)/.test(
    read("src/functions/telemetry-setup.ts"),
  );

  it("is OpenTelemetry, as the worker's is", () => {
    expect(workerStartsDistro).toBe(true);
    expect(telemetryProblems(host, workerStartsDistro)).toEqual([]);
  });

  it("the check fails on the old host.json, which left the host on the Application Insights SDK", () => {
    const old = { logging: { applicationInsights: { samplingSettings: { isEnabled: true } } } };
    expect(telemetryProblems(old, true)).toEqual([
      "the worker runs OpenTelemetry, but the host sends with the Application Insights SDK",
    ]);
    expect(telemetryProblems({ ...old, telemetryMode: "OpenTelemetry" }, true)).toEqual([
      "logging.applicationInsights is the Application Insights SDK's, unused in OpenTelemetry mode",
    ]);
  });
});
