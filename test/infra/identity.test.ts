/**
 * F25-3: the apps' Key Vault references resolve when the sites first start, so that nothing after provisioning
 * has to wait for them. Read from the ARM template `npm run check:infra` compiles: each app resolves its
 * references with a user-assigned identity (made before the site) that holds Key Vault Secrets User on just the
 * secrets it reads, granted on secrets the template creates once, and the sites depend on those grants, so ARM
 * makes them first. The postprovision hook then only writes the secrets' values and checks
 * (./refresh-key-vault-references.test.ts).
 */
import { describe, expect, it } from "vitest";
import { Unresolved } from "./arm-expressions.js";
import {
  type DeployedResource,
  expand,
  GIVEN_PARTNER_URL,
  loadCompiledTemplate,
  MAIN_PARAMETERS,
  moduleOutput,
  type RawTemplate,
} from "./compiled-template.js";
import { BUILT_IN_ROLES, KEY_VAULT_SECRET, roleAssignments } from "./deployment-checks.js";

const compiled = loadCompiledTemplate();
const template = "template" in compiled ? compiled.template : undefined;
const describeCompiled = template ? describe : describe.skip;
const KEY_RING = "data-protection-keys";
const PARTNER_KEY = "partner-access-key";

type Properties = Record<string, unknown>;
type Expanded = ReturnType<typeof expand>;
const shown = (value: unknown) => (value instanceof Unresolved ? value.toString() : String(value));

/** The names of the module deployments a module of main.bicep waits for (its dependsOn). */
function waitsFor(raw: RawTemplate, module: string): string[] {
  const resources = Array.isArray(raw.resources) ? raw.resources : Object.values(raw.resources);
  const found = resources.find((r) => r.type === "Microsoft.Resources/deployments" && r.name === module);
  if (!found) throw new Error(`no module ${module} in main.bicep`);
  const dependsOn = (found.dependsOn ?? []) as string[];
  return dependsOn
    .map((id) => /'Microsoft\.Resources\/deployments', '([^']+)'\)\]$/.exec(id)?.[1] ?? id)
    .sort();
}

/** The identities a site has and the one it resolves its Key Vault references with, as module outputs. */
function referenceIdentity(expanded: Expanded, module: string) {
  const site = expanded.resources.find(
    (r) => r.type === "Microsoft.Web/sites" && r.module === module && !r.existing,
  );
  const properties = (site?.body.properties ?? {}) as Properties;
  const identity = (site?.body.identity ?? {}) as { type?: string; userAssignedIdentities?: Properties };
  // A key of userAssignedIdentities stays an expression (`[format('{0}', parameters('identityId'))]`): the
  // module parameter it names holds the value.
  const parameters = expanded.deployments.find((d) => d.module === module)?.parameters ?? {};
  const assigned = Object.keys(identity.userAssignedIdentities ?? {}).map((key) =>
    moduleOutput(parameters[/parameters\('(\w+)'\)/.exec(key)?.[1] ?? ""]),
  );
  return {
    type: identity.type,
    assigned,
    keyVaultReferenceIdentity: moduleOutput(properties.keyVaultReferenceIdentity),
  };
}

describeCompiled("F25-3: Key Vault references resolvable when the sites start", () => {
  const simulated = template ? expand(template, MAIN_PARAMETERS) : { resources: [], deployments: [] };
  const given = template
    ? expand(template, { ...MAIN_PARAMETERS, partnerUrl: GIVEN_PARTNER_URL })
    : { resources: [], deployments: [] };

  it("the Function App has one identity, user-assigned, and resolves its references with it", () => {
    expect(referenceIdentity(simulated, "function-app")).toEqual({
      type: "UserAssigned",
      assigned: ["app-identity.outputs.id"],
      keyVaultReferenceIdentity: "app-identity.outputs.id",
    });
  });

  it("the partner resolves its reference with a user-assigned identity of its own", () => {
    expect(referenceIdentity(simulated, "partner")).toEqual({
      type: "SystemAssigned, UserAssigned",
      assigned: ["partner-identity.outputs.id"],
      keyVaultReferenceIdentity: "partner-identity.outputs.id",
    });
  });

  it("each identity holds Key Vault Secrets User on just the secrets it reads, and nobody on the whole vault", () => {
    const readers = (resources: readonly DeployedResource[]) =>
      roleAssignments(resources, String(MAIN_PARAMETERS.principalId))
        .filter((a) => a.role === BUILT_IN_ROLES.keyVaultSecretsUser)
        .map((a) => `${a.principal} ${a.scope} ${a.scopeName}`)
        .sort();
    expect(readers(simulated.resources)).toEqual([
      `app ${KEY_VAULT_SECRET} ${KEY_RING}`,
      `app ${KEY_VAULT_SECRET} ${PARTNER_KEY}`,
      `partner ${KEY_VAULT_SECRET} ${PARTNER_KEY}`,
    ]);
    expect(readers(given.resources)).toEqual([`app ${KEY_VAULT_SECRET} ${KEY_RING}`]);
  });

  it("the secrets are created once, never overwritten, with a placeholder marked by its content type", () => {
    const secrets = simulated.resources.filter((r) => r.type === KEY_VAULT_SECRET && !r.existing);
    expect(secrets.map((r) => shown(r.body.name).replace(/>$/, "").split("/").at(-1)).sort()).toEqual([
      KEY_RING,
      PARTNER_KEY,
    ]);
    for (const secret of secrets) {
      expect(secret.body["@options"], secret.symbolicName).toEqual({ onlyIfNotExists: [] });
      expect((secret.body.properties as Properties).contentType).toBe("placeholder");
      // Read by an app before the hook writes it, it is refused as an unresolved reference, naming the setting.
      expect(String((secret.body.properties as Properties).value)).toMatch(
        /^@Microsoft\.KeyVault\(.*azd hooks run postprovision/,
      );
    }
  });

  it("ARM grants them before it makes the sites: the sites' modules wait for the grants", () => {
    if (!template) return;
    expect(waitsFor(template, "function-app")).toEqual(
      expect.arrayContaining(["access", "key-vault-secrets"]),
    );
    expect(waitsFor(template, "partner")).toEqual(expect.arrayContaining(["key-vault-secrets"]));
    // The grants wait for their secrets; the identities are made before either.
    const grants = (
      Array.isArray(template.resources) ? template.resources : Object.values(template.resources)
    ).find((r) => r.name === "key-vault-secrets")?.properties?.template as RawTemplate | undefined;
    const inner = Object.values(grants?.resources ?? {}) as { type: string; dependsOn?: string[] }[];
    for (const grant of inner.filter((r) => r.type === "Microsoft.Authorization/roleAssignments"))
      expect(grant.dependsOn?.length, JSON.stringify(grant)).toBe(1);
    expect(waitsFor(template, "key-vault-secrets")).toEqual(
      expect.arrayContaining(["app-identity", "key-vault"]),
    );
  });
});
