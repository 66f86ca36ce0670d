/**
 * The storefront's deployment (infra/modules/storefront.bicep, its roles in access.bicep, its service in
 * azure.yaml) against its code (storefront/settings.ts) and its build (tsconfig.storefront.json). The tests
 * of the compiled template are skipped without it, as in ./deployment.test.ts; those of azure.yaml and of
 * the packages azd makes are not.
 */
import { readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../src/config/names.js";
import { loadStorefrontSettings, STOREFRONT_SETTINGS } from "../../storefront/settings.js";
import { functionAppPackage } from "../../tools/function-app-package.js";
import { webAppPackage } from "../../tools/web-app-package.js";
import { Unresolved } from "./arm-expressions.js";
import { azdServices, azdVariable } from "./azd-project.js";
import {
  type DeployedResource,
  expand,
  loadCompiledTemplate,
  MAIN_PARAMETERS,
  moduleOutput,
} from "./compiled-template.js";
import {
  BUILT_IN_ROLES,
  excessRoles,
  missingRoles,
  type RoleAssignment,
  roleAssignments,
  secretProblems,
} from "./deployment-checks.js";
import {
  broadReceivers,
  maySendTo,
  receiversOf,
  STOREFRONT_NEEDS,
  unreadSettings,
} from "./storefront-checks.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const STATUS_QUEUE = QUEUE_NAMES.storefrontStatus;

const compiled = loadCompiledTemplate();
const describeCompiled = "skipReason" in compiled ? describe.skip : describe;
const { deployments, resources } =
  "template" in compiled ? expand(compiled.template, MAIN_PARAMETERS) : { deployments: [], resources: [] };

type Properties = Record<string, unknown>;
const propertiesOf = (resource: DeployedResource | undefined) =>
  (resource?.body.properties ?? {}) as Properties;
const inStorefront = (type: string) =>
  resources.filter((r) => r.type === type && r.module === "storefront" && !r.existing);
const site = () => inStorefront("Microsoft.Web/sites")[0];
const siteConfig = () => (propertiesOf(site()).siteConfig ?? {}) as Properties;
const leafName = (value: unknown) =>
  String(value instanceof Unresolved ? value.text : value)
    .split("/")
    .at(-1);
const shown = (value: unknown) => (value instanceof Unresolved ? value.toString() : String(value));

/** The storefront's app settings as compiled: a value, or `<expression>` where only the deployment knows it. */
const storefrontSettings = () =>
  new Map(
    ((siteConfig().appSettings ?? []) as { name: string; value: unknown }[]).map(({ name, value }) => [
      name,
      shown(value),
    ]),
  );

const storefrontDeployment = () => deployments.find((d) => d.module === "storefront");
const mainOutputs = () => deployments.find((d) => d.module === "main")?.outputs ?? {};

describeCompiled("compiled template: the storefront's site", () => {
  it("is one Linux web app on a Basic plan of one instance (shared with the partner), with its own identity", () => {
    const plans = resources.filter(
      (r) => r.type === "Microsoft.Web/serverfarms" && r.module === "app-service-plan",
    );
    expect(plans.map((p) => [p.body.kind, p.body.sku, propertiesOf(p).reserved])).toEqual([
      ["linux", { name: "B1", capacity: 1 }, true],
    ]);
    expect(inStorefront("Microsoft.Web/serverfarms")).toEqual([]);
    expect(inStorefront("Microsoft.Web/sites")).toHaveLength(1);
    expect(site()?.body.kind).toBe("app,linux");
    expect(site()?.body.identity).toEqual({ type: "SystemAssigned" });
    expect(moduleOutput(storefrontDeployment()?.parameters.planId)).toBe("app-service-plan.outputs.id");
  });

  it("runs Node.js 22 (the deployment's nodeVersion) always on, with a health check the storefront answers", () => {
    const nodeVersion = deployments.find((d) => d.module === "main")?.parameters.nodeVersion;
    expect(nodeVersion).toBe("22");
    expect(siteConfig().linuxFxVersion).toBe(`NODE|${nodeVersion}-lts`);
    expect(siteConfig().alwaysOn).toBe(true);
    expect(siteConfig().healthCheckPath).toBe("/api/catalogue");
    expect(read("storefront/storefront.ts")).toContain('path === "/api/catalogue"');
  });

  it("takes HTTPS only, TLS 1.2 or later, and no FTP or publishing passwords", () => {
    expect(propertiesOf(site()).httpsOnly).toBe(true);
    expect([siteConfig().minTlsVersion, siteConfig().scmMinTlsVersion, siteConfig().ftpsState]).toEqual([
      "1.2",
      "1.2",
      "Disabled",
    ]);
    const publishing = inStorefront("Microsoft.Web/sites/basicPublishingCredentialsPolicies");
    expect(publishing.map((r) => [leafName(r.body.name), propertiesOf(r).allow])).toEqual([
      ["ftp", false],
      ["scm", false],
    ]);
  });

  it("F25-6: starts what its package carries as built, with no build on App Service", () => {
    const tsconfig = JSON.parse(read("tsconfig.storefront.json")) as {
      compilerOptions: { rootDir: string; outDir: string };
    };
    const { rootDir, outDir } = tsconfig.compilerOptions;
    const entry = posix.join(outDir, posix.relative(rootDir, "storefront/main.ts").replace(/\.ts$/, ".js"));
    expect(siteConfig().appCommandLine).toBe(`node ${entry}`);
    expect(webAppPackage("storefront").files).toContain(entry);
    // The package is built here (tools/web-app-package.ts): App Service installs and compiles nothing.
    expect(storefrontSettings().get("SCM_DO_BUILD_DURING_DEPLOYMENT")).toBe("false");
    expect(storefrontSettings().has("POST_BUILD_COMMAND")).toBe(false);
  });

  it("is tagged with the App Service service of azure.yaml, and its URL is an output", () => {
    const appServices = azdServices(read("azure.yaml")).filter((s) => s.properties.host === "appservice");
    expect(appServices.map((s) => s.name)).toEqual(["storefront", "partner"]);
    expect(site()?.body.tags).toEqual({
      "azd-env-name": MAIN_PARAMETERS.environmentName,
      "azd-service-name": "storefront",
    });
    expect(String(mainOutputs().STOREFRONT_URL)).toMatch(
      /^<https:\/\/<reference\(.*'Microsoft\.Resources\/deployments', 'storefront'\).*\.outputs\.defaultHostName\.value>>$/,
    );
  });
});

describeCompiled("compiled template: the storefront's settings", () => {
  it("name its queues from queues.json and connect to Service Bus with the site's identity", () => {
    const settings = storefrontSettings();
    expect(settings.get(STOREFRONT_SETTINGS.ordersQueue)).toBe(QUEUE_NAMES.orders);
    expect(settings.get(STOREFRONT_SETTINGS.statusQueue)).toBe(STATUS_QUEUE);
    expect(settings.has(STOREFRONT_SETTINGS.connectionString)).toBe(false);
    expect(moduleOutput(storefrontDeployment()?.parameters.serviceBusNamespace)).toBe(
      "service-bus.outputs.fullyQualifiedNamespace",
    );
  });

  it("hold no key, password, SAS or connection string", () => {
    expect(secretProblems(storefrontSettings())).toEqual([]);
  });

  it("keep the order book on the persistent /home share", () => {
    const settings = storefrontSettings();
    expect(settings.get(STOREFRONT_SETTINGS.data)).toBe("/home/data/storefront");
    expect(settings.get("WEBSITES_ENABLE_APP_SERVICE_STORAGE")).toBe("true");
  });

  it("are each read by storefront/settings.ts or by App Service, and accepted by loadStorefrontSettings", () => {
    const settings = storefrontSettings();
    expect(unreadSettings(settings)).toEqual([]);
    const env = Object.fromEntries(
      [...settings].map(([name, value]) => [name, value.startsWith("<") ? "sb-x.servicebus.example" : value]),
    );
    const loaded = loadStorefrontSettings(env);
    expect([loaded.serviceBus.kind, loaded.ordersQueue, loaded.statusQueue, loaded.data]).toEqual([
      "identity",
      QUEUE_NAMES.orders,
      STATUS_QUEUE,
      "/home/data/storefront",
    ]);
  });

  it("the check fails on a connection string with a key, and on a setting nothing reads", () => {
    const doctored = new Map(storefrontSettings());
    doctored.set(
      STOREFRONT_SETTINGS.connectionString,
      "Endpoint=sb://x/;SharedAccessKeyName=a;SharedAccessKey=b",
    );
    expect(secretProblems(doctored)).toEqual([
      "ServiceBusConnection: holds a connection string or key when set",
      "ServiceBusConnection: its value looks like a secret: Endpoint=sb://x/;SharedAccessKeyName=a;SharedAccessKey=b",
    ]);
    doctored.set("APPLICATIONINSIGHTS_CONNECTION_STRING", "InstrumentationKey=x");
    expect(unreadSettings(doctored)).toEqual(["APPLICATIONINSIGHTS_CONNECTION_STRING: nothing reads it"]);
  });
});

describeCompiled("compiled template: who may use the storefront's status queue", () => {
  const assignments = roleAssignments(resources, String(MAIN_PARAMETERS.principalId));
  const serviceBusRoles = (principal: string) =>
    assignments
      .filter((a) => a.principal === principal && a.scope.startsWith("Microsoft.ServiceBus/"))
      .map((a) => `${a.role} on ${a.scopeName ?? a.scope}`);

  it("the storefront's identity: Data Sender on orders and Data Receiver on its status queue, nothing more", () => {
    expect(serviceBusRoles("storefront").sort()).toEqual(
      [
        `${BUILT_IN_ROLES.serviceBusDataSender} on ${QUEUE_NAMES.orders}`,
        `${BUILT_IN_ROLES.serviceBusDataReceiver} on ${STATUS_QUEUE}`,
      ].sort(),
    );
    expect(missingRoles(assignments, "storefront", STOREFRONT_NEEDS)).toEqual([]);
    expect(
      excessRoles(
        assignments.filter((a) => a.principal === "storefront"),
        { storefront: STOREFRONT_NEEDS },
      ),
    ).toEqual([]);
    for (const held of assignments.filter((a) => a.principal === "storefront"))
      expect(held.principalType).toBe("ServicePrincipal");
  });

  it("the Function App's identity may send to it (the Scheduler's status messages)", () => {
    expect(maySendTo(assignments, "app", STATUS_QUEUE)).toBe(true);
    expect(maySendTo(assignments, "storefront", STATUS_QUEUE)).toBe(false);
  });

  it("nobody but the storefront can receive from it, at the queue, the namespace, the group or the subscription", () => {
    expect(receiversOf(assignments, STATUS_QUEUE)).toEqual([
      `storefront holds role ${BUILT_IN_ROLES.serviceBusDataReceiver} on Microsoft.ServiceBus/namespaces/queues ${STATUS_QUEUE}`,
    ]);
    expect(broadReceivers(assignments)).toEqual([]);
  });
});

describe("the receive check", () => {
  const grant = (principal: string, role: string, scope: string, scopeName?: string): RoleAssignment => ({
    principal,
    role,
    scope,
    scopeName,
    principalType: "ServicePrincipal",
  });
  const queue = "Microsoft.ServiceBus/namespaces/queues";
  const namespace = "Microsoft.ServiceBus/namespaces";
  const storefront = grant("storefront", BUILT_IN_ROLES.serviceBusDataReceiver, queue, STATUS_QUEUE);

  it("fails on the app's old Receiver on the namespace", () => {
    const old = [storefront, grant("app", BUILT_IN_ROLES.serviceBusDataReceiver, namespace)];
    expect(receiversOf(old, STATUS_QUEUE)).toHaveLength(2);
    expect(broadReceivers(old)).toEqual([
      `app holds role ${BUILT_IN_ROLES.serviceBusDataReceiver} on ${namespace}`,
    ]);
  });

  it("fails on Data Owner on the queue, on a role at the deployment's own scope, and on a role it does not know", () => {
    const others = [
      grant("app", BUILT_IN_ROLES.serviceBusDataOwner, queue, STATUS_QUEUE),
      grant("deployer", BUILT_IN_ROLES.serviceBusDataOwner, "<undefined>"),
      grant("someone", "8e3af657-a8ff-443c-a75c-2fe8c4bcb635", "Microsoft.Resources/resourceGroups"),
      grant("someone", BUILT_IN_ROLES.serviceBusDataReceiver, queue, undefined),
    ];
    expect(receiversOf([storefront, ...others], STATUS_QUEUE)).toHaveLength(5);
  });

  it("passes Sender anywhere, and Receiver or Owner on another queue", () => {
    const harmless = [
      grant("app", BUILT_IN_ROLES.serviceBusDataSender, namespace),
      grant("app", BUILT_IN_ROLES.serviceBusDataOwner, queue, QUEUE_NAMES.orders),
      grant("app", BUILT_IN_ROLES.serviceBusDataReceiver, queue, QUEUE_NAMES.invalidMessages),
      grant("app", BUILT_IN_ROLES.storageBlobDataOwner, "Microsoft.Storage/storageAccounts"),
    ];
    expect(receiversOf([storefront, ...harmless], STATUS_QUEUE)).toHaveLength(1);
    expect(broadReceivers(harmless)).toEqual([]);
  });
});

describe("azure.yaml and the packages azd makes", () => {
  const services = azdServices(read("azure.yaml"));

  it("names the Function App, the storefront and the partner, each deployed from its own folder as built", () => {
    expect(services.map((s) => [s.name, s.properties])).toEqual([
      ["api", { project: ".build/function-app", language: "js", host: "function", remoteBuild: "false" }],
      ["storefront", { project: ".build/storefront", language: "js", host: "appservice" }],
      [
        "partner",
        {
          project: ".build/partner",
          language: "js",
          host: "appservice",
          condition: azdVariable("PARTNER_URL:-true"),
        },
      ],
    ]);
  });

  const storefrontPackage = webAppPackage("storefront").files;
  const functionPackage = functionAppPackage(root).files;
  const under = (files: readonly string[], folder: string) => files.filter((f) => f.startsWith(`${folder}/`));

  it("the storefront's: its build and its page, without the tests, the laptop or the other apps", () => {
    expect(storefrontPackage).toContain("package.json");
    expect(under(storefrontPackage, "dist/storefront/storefront")).toContain(
      "dist/storefront/storefront/catalogue.json",
    );
    expect(under(storefrontPackage, "dist/storefront/src")).toContain("dist/storefront/src/domain/order.js");
    expect(under(storefrontPackage, "web/storefront")).toContain("web/storefront/index.html");
    for (const folder of ["storefront", "src", "test", "laptop", "infra", "docs", "tools", "web/dashboard"])
      expect(under(storefrontPackage, folder), folder).toEqual([]);
    expect(
      storefrontPackage.filter((f) => f.startsWith("dist/") && !f.startsWith("dist/storefront/")),
    ).toEqual([]);
  });

  it("the Function App's: no storefront in it, and still its own files (./function-package.test.ts)", () => {
    for (const folder of ["storefront", "web/storefront", "dist/storefront"])
      expect(under(functionPackage, folder), folder).toEqual([]);
    expect(functionPackage).not.toContain("tsconfig.storefront.json");
    expect(under(functionPackage, "web/dashboard")).toContain("web/dashboard/index.html");
    expect(under(functionPackage, "dist")).toContain("dist/functions/index.js");
  });
});
