import type { StoragePipelineOptions } from "@azure/storage-blob";
import { describe, expect, it } from "vitest";
import { COSMOS_RETRIES, cosmosClientOptions } from "../../src/adapters/cosmos/cosmos-client.js";
import { SERVICE_BUS_RETRIES } from "../../src/adapters/servicebus/service-bus-client.js";
import { BLOB_RETRIES, createBlobServiceClient } from "../../src/adapters/storage/blob-client.js";
import { INTEGER_SETTINGS } from "../../src/config/settings.js";

/** The deadlines the clients serve, at the settings' defaults (and the lease at its least). */
const STEP_MS = INTEGER_SETTINGS.stepTimeoutMs.defaultValue;
const HALF_LEASE_MS = INTEGER_SETTINGS.supervisorLeaseMs.min / 2;

describe("F24-2: every Azure SDK client gives up within the deadlines it serves", () => {
  it("Cosmos DB: each try cut at 3 s, throttled requests retried 3 times within 2 s of waits", () => {
    const policy = cosmosClientOptions({
      endpoint: "https://account.documents.azure.com:443/",
    }).connectionPolicy;
    expect(policy).toMatchObject({
      requestTimeout: COSMOS_RETRIES.requestTimeoutMs,
      retryOptions: {
        maxRetryAttemptCount: COSMOS_RETRIES.throttleRetries,
        maxWaitTimeInSeconds: COSMOS_RETRIES.throttleWaitSeconds,
        fixedRetryIntervalInMilliseconds: 0,
      },
    });
    // Every try timing out, and the waits between them: a write or a page of a scan.
    const worst =
      (COSMOS_RETRIES.throttleRetries + 1) * COSMOS_RETRIES.requestTimeoutMs +
      COSMOS_RETRIES.throttleWaitSeconds * 1_000;
    expect(worst).toBeLessThanOrEqual(Math.min(STEP_MS, 2 * HALF_LEASE_MS));
  });

  it("Service Bus: 3 tries of 5 s with exponential waits fit a step's deadline", () => {
    const waits = Array.from({ length: SERVICE_BUS_RETRIES.maxRetries }, (_, i) =>
      // The SDK's exponential wait before retry i + 1: up to 1.2 x delay x (2^(i+1) - 1), capped.
      Math.min(
        1.2 * SERVICE_BUS_RETRIES.retryDelayInMs * (2 ** (i + 1) - 1),
        SERVICE_BUS_RETRIES.maxRetryDelayInMs,
      ),
    );
    const worst =
      (SERVICE_BUS_RETRIES.maxRetries + 1) * SERVICE_BUS_RETRIES.timeoutInMs +
      waits.reduce((a, b) => a + b, 0);
    expect(worst).toBeLessThanOrEqual(STEP_MS);
  });

  it("Blob storage: 3 tries of 2 s renew the Supervisor's lease before its other half runs out", () => {
    const client = createBlobServiceClient({
      kind: "connectionString",
      connectionString: "UseDevelopmentStorage=true",
    });
    // The pipeline a client was built with is protected: read what it was given.
    const built = client as unknown as { readonly pipeline: { readonly options: StoragePipelineOptions } };
    expect(built.pipeline.options.retryOptions).toEqual(BLOB_RETRIES);
    const waits = Array.from({ length: BLOB_RETRIES.maxTries - 1 }, (_, i) =>
      // The SDK's exponential wait after try i + 1: (2^i - 1) x delay, capped.
      Math.min((2 ** i - 1) * BLOB_RETRIES.retryDelayInMs, BLOB_RETRIES.maxRetryDelayInMs),
    );
    const worst = BLOB_RETRIES.maxTries * BLOB_RETRIES.tryTimeoutInMs + waits.reduce((a, b) => a + b, 0);
    expect(worst).toBeLessThanOrEqual(HALF_LEASE_MS);
  });
});
