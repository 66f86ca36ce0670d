import { Agent } from "node:https";
import {
  type Container,
  type ContainerRequest,
  CosmosClient,
  type CosmosClientOptions,
  PartitionKeyKind,
} from "@azure/cosmos";
import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { ORDER_STATE_CONTAINER } from "./container-definition.js";

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
  /** The Entra ID credential to use without a key; `DefaultAzureCredential` when omitted. */
  readonly credential?: TokenCredential;
}

/** The client options a connection stands for: which authentication, which TLS and discovery policy. */
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
    connectionPolicy: { enableEndpointDiscovery: connection.endpointDiscovery ?? !selfSigned },
  };
  if (key !== undefined) options.key = key;
  else options.aadCredentials = credential ?? new DefaultAzureCredential();
  if (selfSigned) options.agent = new Agent({ rejectUnauthorized: false, keepAlive: true });
  return options;
}

export function createCosmosClient(connection: CosmosConnection): CosmosClient {
  return new CosmosClient(cosmosClientOptions(connection));
}

/** The create request for the state container, built from its single definition. */
export function stateContainerRequest(): ContainerRequest {
  const { id, partitionKey, indexingPolicy } = ORDER_STATE_CONTAINER;
  return {
    id,
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

/**
 * Creates the database and the state container when missing, for local emulators. In Azure the Bicep
 * creates them, and the app's identity has no right to.
 */
export async function ensureStateContainer(client: CosmosClient, databaseName: string): Promise<Container> {
  const { database } = await client.databases.createIfNotExists({ id: databaseName });
  const { container } = await database.containers.createIfNotExists(stateContainerRequest());
  return container;
}
