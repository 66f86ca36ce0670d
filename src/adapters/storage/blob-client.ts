import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { BlobServiceClient } from "@azure/storage-blob";

/** How to reach a storage account's blob service. */
export type BlobConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | { readonly kind: "identity"; readonly blobServiceUri: string; readonly clientId?: string };

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
