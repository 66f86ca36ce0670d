import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { BlobLeaseClient } from "@azure/storage-blob";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AzuriteBlob, freshContainer, startAzuriteBlob } from "../../laptop/stand-ins/azurite.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { createBlobServiceClient } from "../../src/adapters/storage/blob-client.js";
import { BlobLease, MAX_LEASE_MS, MIN_LEASE_MS } from "../../src/adapters/storage/blob-lease.js";
import type { LeaseGrant } from "../../src/ports/lease.js";
import { describeLeaseContract } from "../contracts/lease.contract.js";

const ROOT = join(import.meta.dirname, "..", "..");
const DURATION_MS = 30_000;

let azurite: AzuriteBlob;

beforeAll(async () => {
  azurite = await startAzuriteBlob();
}, 60_000);

afterAll(async () => {
  await azurite?.stop();
});

/** A fresh lease container, and a lease in it on a new client each call. */
function leaseContainer() {
  const fresh = freshContainer(azurite);
  return {
    ...fresh,
    lease: (name = "supervisor") => new BlobLease(fresh.container(), name, new SystemClock()),
  };
}

async function acquire(lease: BlobLease, holder: string, durationMs = DURATION_MS): Promise<LeaseGrant> {
  const grant = await lease.tryAcquire(holder, durationMs);
  if (!grant) throw new Error(`expected ${holder} to acquire ${lease.name}`);
  return grant;
}

// No virtual clock: the storage service judges expiry in real time, so the contract's time-dependent
// cases skip, and one real-time test below covers expiry with the shortest lease blobs allow.
describeLeaseContract("BlobLease on Azurite", async () => {
  const leases = leaseContainer();
  return {
    lease: leases.lease(),
    otherHandle: async () => leases.lease(),
    dispose: leases.dispose,
  };
});

describe("BlobLease", () => {
  let leases: ReturnType<typeof leaseContainer>;

  beforeEach(() => {
    leases = leaseContainer();
  });

  afterEach(async () => {
    await leases.dispose();
  });

  // -1 is how the service spells an infinite lease, which an expiring lease must not be.
  it.each([MIN_LEASE_MS - 1_000, MIN_LEASE_MS - 1, MAX_LEASE_MS + 1, MAX_LEASE_MS + 1_000, 20_500, -1])(
    "refuses durationMs %s, naming the 15-60 s range blob leases allow",
    async (durationMs) => {
      const lease = leases.lease();

      await expect(lease.tryAcquire("holder-a", durationMs)).rejects.toThrow(RangeError);
      await expect(lease.tryAcquire("holder-a", durationMs)).rejects.toThrow(
        /whole number of seconds from 15000 to 60000 ms/,
      );
      expect(await leases.container().exists()).toBe(false);
    },
  );

  it.each([MIN_LEASE_MS, MAX_LEASE_MS])(
    "grants a lease of %s ms, the bounds included",
    async (durationMs) => {
      const lease = leases.lease();
      const before = Date.now();

      const grant = await acquire(lease, "holder-a", durationMs);

      expect(grant.durationMs).toBe(durationMs);
      expect(grant.expiresAt.getTime()).toBeGreaterThanOrEqual(before + durationMs);
      expect(grant.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + durationMs);
    },
  );

  it("creates the container and one blob per lease name on first use", async () => {
    const supervisor = leases.lease("supervisor");
    const starter = leases.lease("starter/east");

    await acquire(supervisor, "holder-a");
    await acquire(starter, "holder-b");

    const names: string[] = [];
    for await (const blob of leases.container().listBlobsFlat()) names.push(blob.name);
    expect(names.sort()).toEqual(["starter/east", "supervisor"]);
  });

  it("records the holder and lease id in the blob's metadata under the lease", async () => {
    const lease = leases.lease();
    const holder = "host-7:supervisor é/1";

    const grant = await acquire(lease, holder);

    expect(await leases.lease().currentHolder()).toBe(holder);
    const properties = await leases.container().getBlobClient("supervisor").getProperties();
    expect(properties).toMatchObject({ leaseState: "leased", leaseDuration: "fixed" });
    expect(properties.metadata).toMatchObject({ leaseid: grant.leaseId });

    await lease.release(grant);
    expect(await leases.lease().currentHolder()).toBeNull();
  });

  it("refuses a holder a second grant while it holds one: every grant has a lease id of its own", async () => {
    const grant = await acquire(leases.lease(), "holder-a");

    expect(await leases.lease().tryAcquire("holder-a", DURATION_MS)).toBeNull();
    expect(grant.leaseId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("reports no holder for a lease never taken", async () => {
    expect(await leases.lease().currentHolder()).toBeNull();
  });

  it("names the new holder, under a new lease id, after a release and a fresh acquire", async () => {
    const first = await acquire(leases.lease(), "holder-a");
    await leases.lease().release(first);

    const second = await acquire(leases.lease(), "holder-b");

    expect(second.leaseId).not.toBe(first.leaseId);
    expect(await leases.lease().currentHolder()).toBe("holder-b");
  });

  // Breaking the lease stands in for expiry: the old grant then meets the same answers (409) as after
  // an expiry and a takeover, without waiting 15 s.
  it("returns null when renewing a grant whose lease was broken, and to the old holder after a takeover", async () => {
    const lease = leases.lease();
    const first = await acquire(lease, "holder-a");
    await new BlobLeaseClient(leases.container().getBlobClient("supervisor")).breakLease(0);

    expect(await lease.renew(first)).toBeNull();
    const second = await acquire(leases.lease(), "holder-b");
    expect(await lease.renew(first)).toBeNull();
    await lease.release(first);

    expect(await leases.lease().renew(second)).toMatchObject({ leaseId: second.leaseId, holder: "holder-b" });
    expect(await leases.lease().currentHolder()).toBe("holder-b");
  });

  it("returns null when renewing after the blob was deleted, and release does nothing", async () => {
    const lease = leases.lease();
    const grant = await acquire(lease, "holder-a");
    await leases
      .container()
      .getBlobClient("supervisor")
      .delete({ conditions: { leaseId: grant.leaseId } });

    expect(await lease.renew(grant)).toBeNull();
    await expect(lease.release(grant)).resolves.toBeUndefined();
  });

  it("grants exactly one lease to three processes and this one contending, each with its own client", async () => {
    const name = "supervisor";
    const children = Array.from({ length: 3 }, (_, i) =>
      contender({
        connectionString: azurite.connectionString,
        containerName: leases.containerName,
        name,
        holder: `process-${i}`,
        attempts: 5,
      }),
    );
    await Promise.all(children.map((child) => child.ready));
    const local = leases.lease(name);

    for (const child of children) child.go();
    const localGrants = await Promise.all(
      Array.from({ length: 5 }, () => local.tryAcquire("process-local", DURATION_MS)),
    );
    const childGrants = await Promise.all(children.map((child) => child.grants));

    const grants = [...localGrants.filter((grant) => grant !== null), ...childGrants.flat()];
    expect(grants).toHaveLength(1);
    // The winner's process may have exited without releasing, as a crashed host would: still held.
    expect(await local.tryAcquire("process-late", DURATION_MS)).toBeNull();
    expect(await local.currentHolder()).toBe(grants[0]?.holder);
  }, 30_000);

  it("expires a lease nobody renews: another holder may take it, and an untaken one still renews", async () => {
    const taken = leases.lease("taken");
    const kept = leases.lease("kept");
    const [takenGrant, keptGrant] = await Promise.all([
      acquire(taken, "holder-a", MIN_LEASE_MS),
      acquire(kept, "holder-a", MIN_LEASE_MS),
    ]);

    // Margins of seconds both sides: the grant's expiry is reckoned from before the requests that
    // created the blob and took the lease, and the storage service runs on a loaded machine in CI.
    await delay(MIN_LEASE_MS / 2);
    expect(await leases.lease("taken").tryAcquire("holder-b", MIN_LEASE_MS)).toBeNull();
    await delay(Math.max(0, takenGrant.expiresAt.getTime() + 3_000 - Date.now()));

    const second = await acquire(leases.lease("taken"), "holder-b", MIN_LEASE_MS);
    expect(await taken.renew(takenGrant)).toBeNull();
    await taken.release(takenGrant);
    expect(await leases.lease("taken").currentHolder()).toBe("holder-b");
    expect(second.leaseId).not.toBe(takenGrant.leaseId);

    expect(await kept.renew(keptGrant)).toMatchObject({ leaseId: keptGrant.leaseId });
    expect(await leases.lease("kept").tryAcquire("holder-b", MIN_LEASE_MS)).toBeNull();
  }, 30_000);
});

describe("blob service connection", () => {
  it("reaches Azurite through a client built from a connection string", async () => {
    const client = createBlobServiceClient({
      kind: "connectionString",
      connectionString: azurite.connectionString,
    });
    const container = client.getContainerClient(`leases-${randomUUID()}`);

    expect(
      await new BlobLease(container, "supervisor", new SystemClock()).tryAcquire("holder-a", DURATION_MS),
    ).toMatchObject({
      holder: "holder-a",
    });
    await container.deleteIfExists();
  });

  it("builds an identity-based client on the blob endpoint with DefaultAzureCredential, or the one given", () => {
    const endpoint = "https://sasleases.blob.core.windows.net";
    const byDefault = createBlobServiceClient({
      kind: "identity",
      blobServiceUri: endpoint,
      clientId: "id-1",
    });
    const credential: TokenCredential = { getToken: async () => null };
    const given = createBlobServiceClient({ kind: "identity", blobServiceUri: endpoint }, credential);

    expect(byDefault.url).toBe(`${endpoint}/`);
    expect(byDefault.accountName).toBe("sasleases");
    expect(byDefault.credential).toBeInstanceOf(DefaultAzureCredential);
    expect(given.credential).toBe(credential);
  });
});

interface ContenderOptions {
  readonly connectionString: string;
  readonly containerName: string;
  readonly name: string;
  readonly holder: string;
  readonly attempts: number;
}

/** A separate Node process with its own BlobServiceClient; it contends when told to, then exits. */
const CONTENDER_SCRIPT = `
import { createInterface } from "node:readline";
import { BlobServiceClient } from "@azure/storage-blob";
import { BlobLease } from ${JSON.stringify(pathToFileURL(join(ROOT, "src/adapters/storage/blob-lease.ts")).href)};
import { SystemClock } from ${JSON.stringify(pathToFileURL(join(ROOT, "src/adapters/clock/system-clock.ts")).href)};
const options = JSON.parse(process.env.CONTENDER ?? "{}");
const container = BlobServiceClient.fromConnectionString(options.connectionString).getContainerClient(options.containerName);
const lease = new BlobLease(container, options.name, new SystemClock());
const lines = createInterface({ input: process.stdin });
console.log("ready");
for await (const _ of lines) break;
const results = await Promise.all(Array.from({ length: options.attempts }, () => lease.tryAcquire(options.holder, 30000)));
console.log(JSON.stringify(results.filter((grant) => grant !== null)));
process.exit(0);
`;

function contender(options: ContenderOptions) {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CONTENDER_SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, CONTENDER: JSON.stringify(options) },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const output: string[] = [];
  const exited = once(child, "exit").then(([code]) => {
    if (code !== 0) throw new Error(`contender ${options.holder} exited with ${code}`);
  });
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line === "ready") resolve();
      else output.push(line);
    });
    exited.then(() => reject(new Error(`contender ${options.holder} exited before it was ready`)), reject);
  });
  const grants = exited.then(() => JSON.parse(output.join("\n")) as LeaseGrant[]);
  return { ready, grants, go: () => child.stdin.end("go\n") };
}
