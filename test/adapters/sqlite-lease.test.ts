import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteLease } from "../../laptop/sqlite/sqlite-lease.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { describeLeaseContract } from "../contracts/lease.contract.js";

describeLeaseContract("SqliteLease", async () => {
  const directory = mkdtempSync(join(tmpdir(), "sas-lease-"));
  const path = join(directory, "embedded.db");
  const clock = new VirtualClock();
  const connections: EmbeddedDatabase[] = [];
  const connect = (): SqliteLease => {
    const db = openDatabase(path);
    connections.push(db);
    return new SqliteLease(db, clock, "supervisor");
  };
  return {
    lease: connect(),
    // A real second connection to the same file, as a second process would have.
    otherHandle: async () => connect(),
    clock,
    async dispose() {
      for (const db of connections) db.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
});
