// Bulk loading for the Cosmos DB stand-in: its batch endpoint takes any number of operations in one
// request, which loads a million records in about a minute where the SDK's bulk API, 100 to a request
// with its per-request work, takes several times as long.
import { Agent, request } from "node:https";

export interface StandInBatch {
  /** Creates the documents in the container, in one request; rejects if any create failed. */
  create(databaseName: string, containerId: string, documents: readonly object[]): Promise<void>;
  close(): void;
}

export function standInBatch(endpoint: string): StandInBatch {
  const { hostname, port } = new URL(endpoint);
  // The stand-in's certificate is self-signed, as for the SDK client (allowSelfSignedCertificate).
  const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });
  return {
    create: (databaseName, containerId, documents) =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify(
          documents.map((resourceBody) => ({ operationType: "Create", resourceBody })),
        );
        const req = request(
          {
            host: hostname,
            port,
            method: "POST",
            path: `/dbs/${databaseName}/colls/${containerId}/docs`,
            agent,
            headers: { "x-ms-cosmos-is-batch-request": "True", "content-type": "application/json" },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => {
              const results = JSON.parse(Buffer.concat(chunks).toString()) as { statusCode: number }[];
              const failed = Array.isArray(results) ? results.filter((r) => r.statusCode !== 201).length : -1;
              if (res.statusCode === 200 && failed === 0) resolve();
              else
                reject(
                  new Error(`batch create: HTTP ${res.statusCode}, ${failed} of ${documents.length} failed`),
                );
            });
          },
        );
        req.on("error", reject);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}
