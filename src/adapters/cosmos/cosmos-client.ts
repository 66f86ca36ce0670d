import { Agent } from "node:https";
import {
  type Container,
  type ContainerRequest,
  CosmosClient,
  type CosmosClientOptions,
  type Database,
  PartitionKeyKind,
} from "@azure/cosmos";
import type { TokenCredential } from "@azure/identity";
import { azureCredential } from "../azure-credential.js";
import { ORDER_RECOVERY_CONTAINER, ORDER_STATE_CONTAINER } from "./container-definition.js";

/**
 * Where the account is and how to sign in. With a key the client signs requests with it (the emulator,
 * key-based accounts); without one it signs in with Microsoft Entra ID.
 */
export interface CosmosConnection {
  readonly endpoint: string;
  readonly key?: string;
  /**
   * Skips verification of the server's TLS certificate: for a local emulator's self-signed certificate
   * only, and only with a key. Off unless set.
   */
  readonly allowSelfSignedCertificate?: boolean;
  /**
   * Whether the client asks the account for its regional endpoints. Defaults to on, and to off with a
   * self-signed certificate: an emulator serves one region, and the address its metadata reports may
   * not be the one the client can reach.
   */
  readonly endpointDiscovery?: boolean;
  /** The Entra ID credential to use without a key; the app's managed identity (azure-credential.ts) when omitted. */
  readonly credential?: TokenCredential;
}

/**
 * How long the SDK may spend on one request (F24-2), short of its defaults (a 60 s timeout per try,
 * throttled requests tried 9 more times within 30 s): the state store's writes serve a step's deadline
 * (STEP_TIMEOUT_MS, 30 s by default) and the Supervisor's scans its lease (SUPERVISOR_LEASE_MS, 30 s,
 * renewed once half has run). Each try is cut at `requestTimeoutMs`; a throttled (429) request is tried
 * again at most `throttleRetries` times, after the wait the service asks for, while the waits add up to
 * less than `throttleWaitSeconds`. Worst case for a write: 4 tries of 3 s and 2 s of waits (plus the
 * last wait asked), 14 s. The SDK also tries a read again after a timeout or a dropped connection, by
 * policies no option sets; each of those tries is cut at 3 s too.
 */
export const COSMOS_RETRIES = {
  requestTimeoutMs: 3_000,
  throttleRetries: 3,
  throttleWaitSeconds: 2,
} as const;

/** The client options a connection stands for: authentication, TLS, discovery and retries. */
export function cosmosClientOptions(connection: CosmosConnection): CosmosClientOptions {
  const { endpoint, key, credential } = connection;
  const selfSigned = connection.allowSelfSignedCertificate === true;
  if (key !== undefined && key.trim() === "") {
    throw new Error("Cosmos DB key is empty: omit it to sign in with Microsoft Entra ID");
  }
  if (selfSigned && key === undefined) {
    throw new Error("allowSelfSignedCertificate is for a local emulator, which is reached with a key");
  }
  const options: CosmosClientOptions = {
    endpoint,
    connectionPolicy: {
      enableEndpointDiscovery: connection.endpointDiscovery ?? !selfSigned,
      requestTimeout: COSMOS_RETRIES.requestTimeoutMs,
      retryOptions: {
        maxRetryAttemptCount: COSMOS_RETRIES.throttleRetries,
        maxWaitTimeInSeconds: COSMOS_RETRIES.throttleWaitSeconds,
        // 0: wait as long as the service's answer asks (x-ms-retry-after-ms), not a fixed time.
        fixedRetryIntervalInMilliseconds: 0,
      },
    },
  };
  if (key !== undefined) options.key = key;
  else options.aadCredentials = credential ?? azureCredential();
  if (selfSigned) options.agent = new Agent({ rejectUnauthorized: false, keepAlive: true });
  return options;
}

export function createCosmosClient(connection: CosmosConnection): CosmosClient {
  return new CosmosClient(cosmosClientOptions(connection));
}

/** A container as `container-definition.ts` defines one. */
export type ContainerDefinition = typeof ORDER_STATE_CONTAINER | typeof ORDER_RECOVERY_CONTAINER;

/** The containers the state store works on: the records, and the Supervisor's recovery index. */
export interface StateContainers {
  readonly records: Container;
  readonly recovery: Container;
}

/** The create request for a container, built from its single definition. */
export function containerRequest(definition: ContainerDefinition): ContainerRequest {
  const { id, partitionKey, indexingPolicy } = definition;
  return {
    id,
    ...("defaultTtl" in definition ? { defaultTtl: definition.defaultTtl } : {}),
    partitionKey: {
      paths: [...partitionKey.paths],
      kind: PartitionKeyKind[partitionKey.kind],
      version: partitionKey.version,
    },
    indexingPolicy: {
      indexingMode: indexingPolicy.indexingMode,
      automatic: indexingPolicy.automatic,
      includedPaths: indexingPolicy.includedPaths.map((p) => ({ ...p })),
      excludedPaths: indexingPolicy.excludedPaths.map((p) => ({ ...p })),
      compositeIndexes: indexingPolicy.compositeIndexes.map((index) => index.map((p) => ({ ...p }))),
    },
  };
}

/** The state store's containers in a database, as the deployment created them. */
export function stateContainers(database: Database): StateContainers {
  return {
    records: database.container(ORDER_STATE_CONTAINER.id),
    recovery: database.container(ORDER_RECOVERY_CONTAINER.id),
  };
}

/**
 * Creates the database and the state store's containers when missing, for local emulators. In Azure the
 * Bicep creates them, and the app's identity has no right to.
 */
export async function ensureStateContainers(
  client: CosmosClient,
  databaseName: string,
): Promise<StateContainers> {
  const { database } = await client.databases.createIfNotExists({ id: databaseName });
  const records = await database.containers.createIfNotExists(containerRequest(ORDER_STATE_CONTAINER));
  const recovery = await database.containers.createIfNotExists(containerRequest(ORDER_RECOVERY_CONTAINER));
  return { records: records.container, recovery: recovery.container };
}
