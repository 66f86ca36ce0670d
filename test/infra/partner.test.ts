/**
 * The simulated partner's deployment (infra/modules/partner.bicep and app-service-plan.bicep, its role in
 * access.bicep, its key in the Function App's settings, its service in azure.yaml) against its code
 * (partner/settings.ts) and its build (tsconfig.partner.json). With no partnerUrl, `azd up` deploys it and
 * points the Function App at it; with one, nothing of it is deployed. The tests of the compiled template are
 * skipped without it, as in ./deployment.test.ts; those of azure.yaml and main.parameters.json are not.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FAULT_SETTINGS, loadPartnerSettings, PARTNER_SETTINGS } from "../../partner/settings.js";
import { PARTNER_ACCESS_KEY_SETTING, PARTNER_URL_SETTING } from "../../src/config/names.js";
import { functionAppPackage } from "../../tools/function-app-package.js";
import { webAppPackage } from "../../tools/web-app-package.js";
import { Unresolved } from "./arm-expressions.js";
import { askedParameters, azdConditionHolds, azdServices, azdVariable } from "./azd-project.js";
import {
  type DeployedResource,
  expand,
  GIVEN_PARTNER_URL,
  loadCompiledTemplate,
  MAIN_PARAMETERS,
  moduleOutput,
} from "./compiled-template.js";
import {
  BUILT_IN_ROLES,
  excessRoles,
  missingRoles,
  roleAssignments,
  secretProblems,
} from "./deployment-checks.js";
import {
  PARTNER_LOCAL_ONLY_SETTINGS,
  PARTNER_NEEDS,
  PARTNER_SETTINGS_READ,
  unreadPartnerSettings,
} from "./partner-checks.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

const compiled = loadCompiledTemplate();
const describeCompiled = "skipReason" in compiled ? describe.skip : describe;
const none = { deployments: [], resources: [] };
/** `azd env new x && azd up`: no PARTNER_URL. */
const simulated = "template" in compiled ? expand(compiled.template, MAIN_PARAMETERS) : none;
/** PARTNER_URL set to a partner of the user's. */
const given =
  "template" in compiled
    ? expand(compiled.template, { ...MAIN_PARAMETERS, partnerUrl: GIVEN_PARTNER_URL })
    : none;

type Properties = Record<string, unknown>;
type Expanded = typeof simulated;
const propertiesOf = (resource: DeployedResource | undefined) =>
  (resource?.body.properties ?? {}) as Properties;
const shown = (value: unknown) => (value instanceof Unresolved ? value.toString() : String(value));
const leafName = (value: unknown) =>
  String(value instanceof Unresolved ? value.text : value)
    .split("/")
    .at(-1);
const inModule = (from: Expanded, module: string, type: string) =>
  from.resources.filter((r) => r.module === module && r.type === type && !r.existing);
const site = (from: Expanded, module: string) => inModule(from, module, "Microsoft.Web/sites")[0];
const siteConfig = (from: Expanded, module: string) =>
  (propertiesOf(site(from, module)).siteConfig ?? {}) as Properties;
/** A site's app settings as compiled: a value, or `<expression>` where only the deployment knows it. */
const settingsOf = (from: Expanded, module: string) =>
  new Map(
    ((siteConfig(from, module).appSettings ?? []) as { name: string; value: unknown }[]).map(
      ({ name, value }) => [name, shown(value)],
    ),
  );
const deploymentOf = (from: Expanded, module: string) => {
  const found = from.deployments.find((d) => d.module === module);
  if (!found) throw new Error(`no module deployment ${module}`);
  return found;
};
const PARTNER_MODULES = ["partner", "partner-storage", "partner-network"];
const KEY_SECRET = "partner-access-key";
const keyReference = (settings: ReadonlyMap<string, string>) =>
  settings.get(PARTNER_ACCESS_KEY_SETTING) ?? "";

describeCompiled("compiled template, no partnerUrl: the simulated partner's site", () => {
  it("shares the storefront's one Basic Linux plan, one instance, so it adds no plan to pay for", () => {
    const plans = simulated.resources.filter((r) => r.type === "Microsoft.Web/serverfarms" && !r.existing);
    expect(plans.map((p) => [p.module, p.body.sku])).toEqual([
      ["function-app", { name: "FC1", tier: "FlexConsumption" }],
      ["app-service-plan", { name: "B1", capacity: 1 }],
    ]);
    for (const module of ["storefront", "partner"]) {
      expect(moduleOutput(deploymentOf(simulated, module).parameters.planId), module).toBe(
        "app-service-plan.outputs.id",
      );
      expect(shown(propertiesOf(site(simulated, module)).serverFarmId), module).toContain("app-service-plan");
    }
  });

  it("is a Linux web app with its own identities, Node.js per nodeVersion, always on", () => {
    expect(inModule(simulated, "partner", "Microsoft.Web/sites")).toHaveLength(1);
    expect(site(simulated, "partner")?.body.kind).toBe("app,linux");
    // System-assigned for its books; user-assigned for its Key Vault reference (./identity.test.ts).
    expect((site(simulated, "partner")?.body.identity as { type?: string } | undefined)?.type).toBe(
      "SystemAssigned, UserAssigned",
    );
    const nodeVersion = deploymentOf(simulated, "main").parameters.nodeVersion;
    expect(siteConfig(simulated, "partner").linuxFxVersion).toBe(`NODE|${nodeVersion}-lts`);
    expect(siteConfig(simulated, "partner").alwaysOn).toBe(true);
  });

  it("is probed on GET /health, the one route the partner answers without its key", () => {
    expect(siteConfig(simulated, "partner").healthCheckPath).toBe("/health");
    expect(read("partner/partner-service.ts")).toContain('path === "/health"');
  });

  it("takes HTTPS only, TLS 1.2 or later, and no FTP or publishing passwords", () => {
    const config = siteConfig(simulated, "partner");
    expect(propertiesOf(site(simulated, "partner")).httpsOnly).toBe(true);
    expect([config.minTlsVersion, config.scmMinTlsVersion, config.ftpsState]).toEqual([
      "1.2",
      "1.2",
      "Disabled",
    ]);
    const publishing = inModule(
      simulated,
      "partner",
      "Microsoft.Web/sites/basicPublishingCredentialsPolicies",
    );
    expect(publishing.map((r) => [leafName(r.body.name), propertiesOf(r).allow])).toEqual([
      ["ftp", false],
      ["scm", false],
    ]);
  });

  it("F25-6: starts what tsconfig.partner.json compiles from partner/main.ts, built before packaging, not on App Service", () => {
    const tsconfig = JSON.parse(read("tsconfig.partner.json")) as {
      compilerOptions: { rootDir: string; outDir: string };
    };
    const { rootDir, outDir } = tsconfig.compilerOptions;
    const entry = posix.join(outDir, posix.relative(rootDir, "partner/main.ts").replace(/\.ts$/, ".js"));
    expect(siteConfig(simulated, "partner").appCommandLine).toBe(`node ${entry}`);
    expect(existsSync(join(root, "partner/main.ts"))).toBe(true);
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
    const settings = settingsOf(simulated, "partner");
    expect(scripts["build:partner"]).toBe("tsc -p tsconfig.partner.json");
    expect(settings.get("SCM_DO_BUILD_DURING_DEPLOYMENT")).toBe("false");
    expect(settings.has("POST_BUILD_COMMAND")).toBe(false);
  });

  it("is tagged with the partner service of azure.yaml, and its address and names are outputs for the hook", () => {
    expect(site(simulated, "partner")?.body.tags).toEqual({
      "azd-env-name": MAIN_PARAMETERS.environmentName,
      "azd-service-name": "partner",
    });
    const outputs = deploymentOf(simulated, "main").outputs;
    expect(moduleOutput(outputs.AZURE_PARTNER_NAME)).toBe("partner.outputs.name");
    expect(moduleOutput(outputs.AZURE_PARTNER_ID)).toBe("partner.outputs.id");
    expect(moduleOutput(outputs.AZURE_PARTNER_PRINCIPAL_ID)).toBe("partner.outputs.principalId");
    expect(outputs.AZURE_PARTNER_ACCESS_SECRET_NAME).toBe(KEY_SECRET);
    // Never PARTNER_URL itself: azd would write it to the environment, and the next provision would read the
    // simulated partner's address as a partner of the user's.
    expect(Object.keys(outputs)).not.toContain(PARTNER_URL_SETTING);
  });
});

describeCompiled("compiled template, no partnerUrl: the partner's books", () => {
  const account = () => inModule(simulated, "partner-storage", "Microsoft.Storage/storageAccounts")[0];

  it("are in a storage account of its own: Standard_LRS, Entra ID only, TLS 1.2, no public blobs", () => {
    expect(inModule(simulated, "partner-storage", "Microsoft.Storage/storageAccounts")).toHaveLength(1);
    expect(account()?.body.sku).toEqual({ name: "Standard_LRS" });
    const properties = propertiesOf(account());
    expect([
      properties.allowSharedKeyAccess,
      properties.minimumTlsVersion,
      properties.allowBlobPublicAccess,
    ]).toEqual([false, "TLS1_2", false]);
    const storageOf = (module: string) => String(deploymentOf(simulated, module).parameters.name);
    expect(storageOf("partner-storage")).not.toBe(storageOf("storage"));
  });

  it("in its private container partner-ledger, which PARTNER_LEDGER_CONTAINER_URL names on that account", () => {
    const containers = inModule(
      simulated,
      "partner-storage",
      "Microsoft.Storage/storageAccounts/blobServices/containers",
    );
    expect(containers.map((c) => [leafName(c.body.name), propertiesOf(c).publicAccess])).toEqual([
      ["partner-ledger", "None"],
    ]);
    const url = settingsOf(simulated, "partner").get(PARTNER_SETTINGS.containerUrl) ?? "";
    expect(url).toMatch(/^<<reference\('ledgerStorage'\)\.outputs\.blobEndpoint\.value>partner-ledger>$/);
  });

  it("are written with the partner's identity, which holds Storage Blob Data Contributor on that account only", () => {
    const assignments = roleAssignments(simulated.resources, String(MAIN_PARAMETERS.principalId));
    const held = assignments.filter((a) => a.principal === "partner");
    expect(missingRoles(held, "partner", PARTNER_NEEDS)).toEqual([]);
    expect(excessRoles(held, { partner: PARTNER_NEEDS })).toEqual([]);
    expect(held.map((a) => a.principalType)).toEqual(["ServicePrincipal", "ServicePrincipal"]);
    const grant = simulated.resources.find(
      (r) => r.type === "Microsoft.Authorization/roleAssignments" && r.symbolicName === "partnerLedgerRole",
    );
    expect(grant?.body.condition).toBe(true);
    // The account the partner module creates, not the Function App's: the same name passed to both modules.
    const scoped = shown(grant?.body.scope);
    expect(scoped).toContain(shown(deploymentOf(simulated, "partner").parameters.storageAccountName));
    expect(scoped).not.toContain("'storage'");
  });
});

describeCompiled("compiled template, no partnerUrl: only the Function App may call it", () => {
  const partnerSettings = () => settingsOf(simulated, "partner");
  const appSettings = () => settingsOf(simulated, "function-app");

  it("both apps read the same Key Vault secret, partner-access-key, through Key Vault references", () => {
    for (const settings of [partnerSettings(), appSettings()]) {
      const reference = keyReference(settings);
      expect(reference).toMatch(/^<@Microsoft\.KeyVault\(VaultName=.*;SecretName=partner-access-key\)>$/);
      expect(reference).toContain("'Microsoft.Resources/deployments', 'key-vault'");
    }
    expect(deploymentOf(simulated, "partner").parameters.keyVaultName).toEqual(
      deploymentOf(simulated, "function-app").parameters.keyVaultName,
    );
  });

  it("the Function App calls the partner's own host; both read the key through a grant on that one secret", () => {
    expect(appSettings().get(PARTNER_URL_SETTING)).toMatch(
      /^<https:\/\/<reference\(.*'Microsoft\.Resources\/deployments', 'partner'\).*\.outputs\.defaultHostName\.value>>$/,
    );
    const assignments = roleAssignments(simulated.resources, String(MAIN_PARAMETERS.principalId));
    const keyReaders = assignments
      .filter((a) => a.role === BUILT_IN_ROLES.keyVaultSecretsUser)
      .map((a) => `${a.principal} ${a.scope} ${a.scopeName}`);
    expect(keyReaders).toEqual(
      expect.arrayContaining([
        `app Microsoft.KeyVault/vaults/secrets ${KEY_SECRET}`,
        `partner Microsoft.KeyVault/vaults/secrets ${KEY_SECRET}`,
      ]),
    );
    expect(
      assignments.filter((a) => a.scope === "Microsoft.KeyVault/vaults" && a.principal !== "deployer"),
    ).toEqual([]);
  });

  it("F24-5: App Service lets through the Function App's subnet alone, and keeps the deployment site open to azd", () => {
    const config = siteConfig(simulated, "partner");
    const subnet = "partner-network.outputs.functionAppSubnetId";
    expect(config.ipSecurityRestrictionsDefaultAction).toBe("Deny");
    const rules = (config.ipSecurityRestrictions ?? []) as Properties[];
    expect(
      rules.map((rule) => [rule.action, rule.priority, moduleOutput(rule.vnetSubnetResourceId)]),
    ).toEqual([["Allow", 100, subnet]]);
    expect(rules.some((rule) => "ipAddress" in rule || "tag" in rule)).toBe(false);
    expect([config.scmIpSecurityRestrictionsUseMain, config.scmIpSecurityRestrictionsDefaultAction]).toEqual([
      false,
      "Allow",
    ]);
    // The Function App joins that subnet, so its calls to the partner arrive from it.
    expect(moduleOutput(deploymentOf(simulated, "function-app").parameters.virtualNetworkSubnetId)).toBe(
      subnet,
    );
    expect(shown(propertiesOf(site(simulated, "function-app")).virtualNetworkSubnetId)).toContain(
      "parameters('virtualNetworkSubnetId')",
    );
  });

  it("F24-5: the subnet is delegated to Flex Consumption, with the Microsoft.Web service endpoint and outbound access", () => {
    const networks = inModule(simulated, "partner-network", "Microsoft.Network/virtualNetworks");
    expect(networks).toHaveLength(1);
    const subnets = (propertiesOf(networks[0]).subnets ?? []) as { name: string; properties: Properties }[];
    expect(subnets.map((subnet) => subnet.name)).toEqual(["function-app"]);
    const subnet = subnets[0]?.properties ?? {};
    expect(subnet.delegations).toEqual([
      { name: "flex-consumption", properties: { serviceName: "Microsoft.App/environments" } },
    ]);
    expect((subnet.serviceEndpoints as { service: string }[]).map((endpoint) => endpoint.service)).toEqual([
      "Microsoft.Web",
    ]);
    expect(subnet.defaultOutboundAccess).toBe(true);
  });

  it("no setting holds a secret, and each is read by partner/settings.ts or by App Service", () => {
    expect(secretProblems(partnerSettings())).toEqual([]);
    expect(unreadPartnerSettings(partnerSettings())).toEqual([]);
    for (const name of PARTNER_LOCAL_ONLY_SETTINGS) expect(partnerSettings().has(name), name).toBe(false);
  });

  it("start the partner with the contract's fault rates, slow answer and seed, as partner/settings.ts defaults them", () => {
    const settings = partnerSettings();
    for (const { name, fallback } of Object.values(FAULT_SETTINGS))
      expect(settings.get(name), name).toBe(String(fallback));
    expect([settings.get(PARTNER_SETTINGS.slowMs), settings.get(PARTNER_SETTINGS.seed)]).toEqual([
      "15000",
      "7",
    ]);
  });

  it("are accepted by loadPartnerSettings once the reference resolves, and refused while it does not", () => {
    const env = Object.fromEntries(
      [...partnerSettings()].map(([name, value]) => [
        name,
        name === PARTNER_SETTINGS.containerUrl
          ? "https://stpt.blob.core.windows.net/partner-ledger"
          : name === PARTNER_SETTINGS.accessKey
            ? "k".repeat(43)
            : value,
      ]),
    );
    const loaded = loadPartnerSettings(env);
    expect([loaded.books.kind, loaded.faults, loaded.slowMs, loaded.seed]).toEqual([
      "containerUrl",
      { transient: 0.1, permanent: 0.01, slow: 0.03, lostReply: 0.01 },
      15000,
      7,
    ]);
    const unresolved = { ...env, [PARTNER_SETTINGS.accessKey]: keyReference(partnerSettings()).slice(1, -1) };
    expect(() => loadPartnerSettings(unresolved)).toThrow(
      /PARTNER_ACCESS_KEY is an unresolved Key Vault reference/,
    );
  });

  it("the checks fail on a key written into a setting, and on a setting nothing reads", () => {
    const doctored = new Map(partnerSettings());
    doctored.set(PARTNER_SETTINGS.accessKey, "s3cret-in-the-template");
    doctored.set("PARTNER_FAULT_TRANSIENTS", "0.2");
    expect(secretProblems(doctored)).toEqual(["PARTNER_ACCESS_KEY: its name says it holds a secret"]);
    expect(unreadPartnerSettings(doctored)).toEqual(["PARTNER_FAULT_TRANSIENTS: nothing reads it"]);
    expect(PARTNER_SETTINGS_READ).toContain(PARTNER_ACCESS_KEY_SETTING);
  });
});

describeCompiled("compiled template, partnerUrl given: nothing of the simulated partner", () => {
  it("the Function App calls the given URL and holds no partner key", () => {
    const settings = settingsOf(given, "function-app");
    expect(settings.get(PARTNER_URL_SETTING)).toBe(GIVEN_PARTNER_URL);
    expect(settings.has(PARTNER_ACCESS_KEY_SETTING)).toBe(false);
  });

  it("the Function App joins no subnet: nothing of its network is the partner's to restrict", () => {
    expect(deploymentOf(given, "function-app").parameters.virtualNetworkSubnetId).toBe("");
    expect(propertiesOf(site(given, "function-app")).virtualNetworkSubnetId).toBeNull();
  });

  it("neither the site, its storage nor its role is deployed, and the outputs name no partner", () => {
    const partnerResources = given.resources.filter((r) => PARTNER_MODULES.includes(r.module) && !r.existing);
    expect(partnerResources.length).toBeGreaterThan(0);
    expect(partnerResources.filter((r) => r.body.condition !== false).map((r) => r.type)).toEqual([]);
    for (const module of PARTNER_MODULES) expect(deploymentOf(given, module).condition, module).toBe(false);
    const grant = given.resources.find((r) => r.symbolicName === "partnerLedgerRole");
    expect(grant?.body.condition).toBe(false);
    expect(roleAssignments(given.resources, "").filter((a) => a.principal === "partner")).toEqual([]);
    const outputs = deploymentOf(given, "main").outputs;
    expect([
      outputs.AZURE_PARTNER_NAME,
      outputs.AZURE_PARTNER_ID,
      outputs.AZURE_PARTNER_PRINCIPAL_ID,
      outputs.AZURE_PARTNER_ACCESS_SECRET_NAME,
    ]).toEqual(["", "", "", ""]);
  });

  it("the conditions read partnerUrl alone: empty deploys the partner, anything else does not", () => {
    const template = "template" in compiled ? compiled.template : undefined;
    expect(template?.variables?.simulatePartner).toBe("[empty(parameters('partnerUrl'))]");
    expect(template?.parameters?.partnerUrl?.defaultValue).toBe("");
    const modules = Object.values(template?.resources ?? {}).filter(
      (r) => r.type === "Microsoft.Resources/deployments",
    );
    // The other conditional module is the Durable Task Scheduler's (test/infra/durable-backend.test.ts).
    expect(modules.filter((m) => m.condition !== undefined).map((m) => [m.name, m.condition])).toEqual([
      ["durable-task", "[variables('useScheduler')]"],
      ["partner-identity", "[variables('simulatePartner')]"],
      ["partner-network", "[variables('simulatePartner')]"],
      ["partner", "[variables('simulatePartner')]"],
    ]);
  });
});

describe("azd env new x && azd up", () => {
  const file = JSON.parse(read("infra/main.parameters.json")) as {
    parameters: Record<string, { value?: unknown }>;
  };
  const partner = azdServices(read("azure.yaml")).find((s) => s.name === "partner");

  it.skipIf("skipReason" in compiled)(
    "asks for no parameter: each has a default or a value azd fills in",
    () => {
      const declared = "template" in compiled ? (compiled.template.parameters ?? {}) : {};
      expect(askedParameters(declared, file.parameters)).toEqual([]);
    },
  );

  it("the check names a parameter without a default whose variable the user must set", () => {
    const declared = {
      partnerUrl: { type: "string" },
      location: { type: "string" },
      retentionDays: { type: "int" },
    };
    const values = {
      partnerUrl: { value: azdVariable("PARTNER_URL") },
      location: { value: azdVariable("AZURE_LOCATION") },
      retentionDays: { value: azdVariable("RETENTION_DAYS=30") },
    };
    expect(askedParameters(declared, values)).toEqual(["partnerUrl"]);
    expect(askedParameters({ alertEmail: { type: "string" } }, {})).toEqual(["alertEmail"]);
  });

  it("deploys the partner service exactly when the Bicep deploys the partner: both read PARTNER_URL", () => {
    expect(file.parameters.partnerUrl?.value).toBe(azdVariable("PARTNER_URL"));
    expect(partner?.properties).toEqual({
      project: ".build/partner",
      language: "js",
      host: "appservice",
      condition: azdVariable("PARTNER_URL:-true"),
    });
    const condition = partner?.properties.condition ?? "";
    expect(azdConditionHolds(condition, {})).toBe(true);
    expect(azdConditionHolds(condition, { PARTNER_URL: "" })).toBe(true);
    expect(azdConditionHolds(condition, { PARTNER_URL: GIVEN_PARTNER_URL })).toBe(false);
    // 1.23.4 brought `condition`; the Function App's `remoteBuild: false` needs 1.23.12 (./function-package.test.ts).
    expect(read("azure.yaml")).toMatch(/requiredVersions:\s*\n\s+azd: ">= 1\.23\.12"/);
  });

  it("builds the partner on this machine first, so a type error stops before anything is uploaded", () => {
    // One step builds all three apps before any service is packaged (./azd-services.test.ts).
    expect(read("infra/scripts/prepackage.sh")).toMatch(/^npm run build:partner$/m);
  });
});

describe("the packages azd makes, with the partner", () => {
  const partnerPackage = webAppPackage("partner").files;
  const functionPackage = functionAppPackage(root).files;
  const under = (files: readonly string[], folder: string) => files.filter((f) => f.startsWith(`${folder}/`));

  it("the partner's carries its build, started as the Bicep starts it, and nothing of the laptop or the tests", () => {
    expect(partnerPackage).toContain(
      String(siteConfig(simulated, "partner").appCommandLine ?? "node dist/partner/partner/main.js").replace(
        /^node /,
        "",
      ),
    );
    expect(partnerPackage).toContain("dist/partner/partner/settings.js");
    for (const folder of ["partner", "src", "laptop", "test", "node_modules", "web"])
      expect(under(partnerPackage, folder), folder).toEqual([]);
  });

  it("the Function App's leaves the partner out", () => {
    expect(under(functionPackage, "partner")).toEqual([]);
    expect(under(functionPackage, "dist/partner")).toEqual([]);
    expect(functionPackage).not.toContain("tsconfig.partner.json");
  });
});
