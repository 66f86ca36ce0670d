import { BlobServiceClient } from "@azure/storage-blob";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CountingStorage, operationOf, startCountingStorage } from "../../bench/storage-counter.js";
import { type AzuriteStorage, startAzuriteStorage } from "../../laptop/stand-ins/azurite.js";

let azurite: AzuriteStorage;
let proxy: CountingStorage;

const portOf = (endpoint: string) => Number(new URL(endpoint).port);

beforeAll(async () => {
  azurite = await startAzuriteStorage();
  proxy = await startCountingStorage({
    blob: portOf(azurite.blobEndpoint),
    queue: portOf(azurite.queueEndpoint),
    table: portOf(azurite.tableEndpoint),
  });
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  await azurite?.stop();
});

describe("F23-4: the storage request counter in front of Azurite", () => {
  it("forwards a blob exchange unchanged and counts each request Azurite served by service and operation", async () => {
    const connection = azurite.connectionString.replace(
      azurite.blobEndpoint,
      `http://127.0.0.1:${proxy.ports.blob}/devstoreaccount1`,
    );
    const container = BlobServiceClient.fromConnectionString(connection).getContainerClient("counted");
    await container.create();
    await container.getBlockBlobClient("a").upload("hello", 5);
    const body = await (await container.getBlockBlobClient("a").download()).readableStreamBody;
    const chunks: Buffer[] = [];
    for await (const chunk of body ?? []) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe("hello");
    // A refused request is served too, and billed: here one with no key, answered as Azurite answers it.
    const path = "/devstoreaccount1/q1/messages";
    const direct = await fetch(`${new URL(azurite.queueEndpoint).origin}${path}`);
    const refused = await fetch(`http://127.0.0.1:${proxy.ports.queue}${path}`);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const code = (text: string) => /<Code>(\w+)<\/Code>/.exec(text)?.[1];
    expect([refused.status, code(await refused.text())]).toEqual([direct.status, code(await direct.text())]);
    expect(proxy.counts()).toEqual({
      byService: { blob: 3, queue: 1, table: 0 },
      byOperation: {
        "blob PUT container": 1,
        "blob PUT blob": 1,
        "blob GET blob": 1,
        "queue GET messages": 1,
      },
      total: 4,
    });
  });

  it("names the operations the Durable Task backend's requests are", () => {
    expect(operationOf("queue", "GET", "/devstoreaccount1/hub-control-00/messages?numofmessages=32")).toBe(
      "GET messages",
    );
    expect(operationOf("queue", "DELETE", "/devstoreaccount1/hub-workitems/messages/id?popreceipt=x")).toBe(
      "DELETE messages",
    );
    expect(operationOf("queue", "GET", "/devstoreaccount1/q/messages?peekonly=true")).toBe(
      "GET messages (peek)",
    );
    expect(operationOf("queue", "GET", "/devstoreaccount1/q?comp=metadata")).toBe("GET comp=metadata");
    expect(operationOf("table", "POST", "/devstoreaccount1/$batch")).toBe("POST batch");
    expect(operationOf("table", "POST", "/devstoreaccount1/Tables")).toBe("POST tables");
    expect(operationOf("table", "GET", "/devstoreaccount1/HubHistory()?$filter=x")).toBe("GET entities");
    expect(operationOf("blob", "PUT", "/devstoreaccount1/hub-leases/default/p0?comp=lease")).toBe(
      "PUT lease",
    );
    expect(operationOf("blob", "GET", "/devstoreaccount1/hub-leases?restype=container&comp=list")).toBe(
      "GET comp=list",
    );
  });
});
