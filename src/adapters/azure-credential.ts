/**
 * The Entra ID credential the app's clients authenticate with. In Azure, where App Service and Functions expose a
 * managed identity endpoint (IDENTITY_ENDPOINT), it is that managed identity and nothing else: the user-assigned
 * identity AZURE_CLIENT_ID names (the Bicep sets it to the Function App's), or the site's system-assigned one when
 * the setting is absent (the storefront's, the partner's). DefaultAzureCredential would try environment
 * credentials and developer tools first, and pick whichever identity it found; a chain is what a laptop needs
 * (`az login`, a pipeline's service principal), so it stays the answer where there is no managed identity.
 */
import { DefaultAzureCredential, ManagedIdentityCredential, type TokenCredential } from "@azure/identity";

/** The client id of the user-assigned managed identity the app runs as (set by the Bicep). */
export const MANAGED_IDENTITY_CLIENT_ID_SETTING = "AZURE_CLIENT_ID";

/** Set by App Service and Azure Functions wherever the site has a managed identity. */
export const IDENTITY_ENDPOINT_SETTING = "IDENTITY_ENDPOINT";

const CLIENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type CredentialChoice =
  | { readonly kind: "managedIdentity"; readonly clientId?: string }
  | { readonly kind: "developer" };

/**
 * Which credential `azureCredential` makes for these settings; `clientId` (a connection's own, when it names one)
 * comes before AZURE_CLIENT_ID. Throws naming the setting when a client id is not a GUID.
 */
export function credentialChoice(
  env: Readonly<Record<string, string | undefined>>,
  clientId?: string,
): CredentialChoice {
  if (!env[IDENTITY_ENDPOINT_SETTING]?.trim()) return { kind: "developer" };
  const id = clientId?.trim() || env[MANAGED_IDENTITY_CLIENT_ID_SETTING]?.trim();
  if (!id) return { kind: "managedIdentity" };
  if (!CLIENT_ID.test(id)) {
    const source = clientId?.trim() ? "the connection's clientId" : MANAGED_IDENTITY_CLIENT_ID_SETTING;
    throw new Error(
      `${source}: expected the client id (a GUID) of the app's user-assigned managed identity, got ${JSON.stringify(id)}`,
    );
  }
  return { kind: "managedIdentity", clientId: id };
}

/** The credential for these settings (the process's by default); see `credentialChoice`. */
export function azureCredential(
  env: Readonly<Record<string, string | undefined>> = process.env,
  clientId?: string,
): TokenCredential {
  const choice = credentialChoice(env, clientId);
  if (choice.kind === "developer") return new DefaultAzureCredential();
  return choice.clientId
    ? new ManagedIdentityCredential({ clientId: choice.clientId })
    : new ManagedIdentityCredential();
}
