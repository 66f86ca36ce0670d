import type { TokenCredential } from "@azure/identity";
import { BlobServiceClient, type StoragePipelineOptions, StorageRetryPolicyType } from "@azure/storage-blob";
import { azureCredential } from "../azure-credential.js";

/** How to reach a storage account's blob service. */
export type BlobConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | { readonly kind: "identity"; readonly blobServiceUri: string; readonly clientId?: string };

/**
 * How the client retries (F24-2), short of its defaults (no timeout of its own per try, 4 tries with
 * waits growing to 120 s): it serves the Supervisor's lease and scan journal, and a lease renewed once
 * half of it has run must be renewed before the other half ends (SUPERVISOR_LEASE_MS, 15 s at the
 * least: 7.5 s). Each try is cut at 2 s; 3 tries, the waits between them 0 then 0.5 s. Worst case:
 * 3 × 2 s + 0.5 s, 6.5 s.
 */
export const BLOB_RETRIES = {
  retryPolicyType: StorageRetryPolicyType.EXPONENTIAL,
  maxTries: 3,
  tryTimeoutInMs: 2_000,
  retryDelayInMs: 500,
  maxRetryDelayInMs: 2_000,
} as const;

const BLOB_OPTIONS: StoragePipelineOptions = { retryOptions: BLOB_RETRIES };

/** `credential` replaces the app's managed identity (azure-credential.ts) for an identity-based connection (tests, other hosts). */
export function createBlobServiceClient(
  connection: BlobConnection,
  credential?: TokenCredential,
): BlobServiceClient {
  if (connection.kind === "connectionString") {
    return BlobServiceClient.fromConnectionString(connection.connectionString, BLOB_OPTIONS);
  }
  const identity = credential ?? azureCredential(process.env, connection.clientId);
  return new BlobServiceClient(connection.blobServiceUri, identity, BLOB_OPTIONS);
}
