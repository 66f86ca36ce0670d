import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteScanJournal } from "../../laptop/sqlite/sqlite-scan-journal.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { describeScanJournalContract } from "../contracts/scan-journal.contract.js";

describeScanJournalContract("SQLite in memory", async () => {
  const db = openDatabase(":memory:");
  const journal = new SqliteScanJournal(db);
  return {
    journal,
    otherHandle: async () => new SqliteScanJournal(db),
    dispose: async () => void db.close(),
  };
});

describeScanJournalContract("SQLite file, two connections", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sas-scans-"));
  const path = join(dir, "sas.sqlite");
  const db = openDatabase(path);
  const others: ReturnType<typeof openDatabase>[] = [];
  return {
    journal: new SqliteScanJournal(db),
    otherHandle: async () => {
      const other = openDatabase(path);
      others.push(other);
      return new SqliteScanJournal(other);
    },
    dispose: async () => {
      for (const other of others) other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
