import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { BlobServiceClient } from "@azure/storage-blob";

export type Settings = Readonly<Record<string, string | undefined>>;

/** How to reach a storage account's blob service. */
export type BlobConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | { readonly kind: "identity"; readonly blobServiceUri: string; readonly clientId?: string };

/**
 * Reads a storage connection the way the Functions host reads `AzureWebJobsStorage`: the setting itself
 * holds a connection string (Azurite: `UseDevelopmentStorage=true`), or, for an identity-based
 * connection, `<prefix>__blobServiceUri` or `<prefix>__accountName`, with `<prefix>__clientId` naming
 * a user-assigned managed identity when `<prefix>__credential` is `managedidentity`.
 */
export function blobConnectionFromSettings(
  settings: Settings,
  prefix = "AzureWebJobsStorage",
): BlobConnection {
  const value = (suffix: string): string | undefined => {
    const raw = settings[`${prefix}${suffix}`]?.trim();
    return raw === "" ? undefined : raw;
  };
  const connectionString = value("");
  if (connectionString) return { kind: "connectionString", connectionString };

  const accountName = value("__accountName");
  const blobServiceUri =
    value("__blobServiceUri") ?? (accountName ? `https://${accountName}.blob.core.windows.net` : undefined);
  if (!blobServiceUri) {
    throw new Error(
      `no storage connection: set ${prefix} to a connection string, or ${prefix}__blobServiceUri or ${prefix}__accountName for an identity-based connection`,
    );
  }
  const clientId =
    value("__credential")?.toLowerCase() === "managedidentity" ? value("__clientId") : undefined;
  return clientId ? { kind: "identity", blobServiceUri, clientId } : { kind: "identity", blobServiceUri };
}

/** `credential` replaces DefaultAzureCredential for an identity-based connection (tests, other hosts). */
export function createBlobServiceClient(
  connection: BlobConnection,
  credential?: TokenCredential,
): BlobServiceClient {
  if (connection.kind === "connectionString") {
    return BlobServiceClient.fromConnectionString(connection.connectionString);
  }
  const identity =
    credential ??
    new DefaultAzureCredential(
      connection.clientId ? { managedIdentityClientId: connection.clientId } : undefined,
    );
  return new BlobServiceClient(connection.blobServiceUri, identity);
}
