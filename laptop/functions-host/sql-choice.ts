import { join } from "node:path";
import { CONNECTION_NAMES } from "../../src/config/names.js";
import { answers } from "../http/port-probe.js";

const sql = CONNECTION_NAMES.sql;
const SQL_SETTINGS = [sql, `${sql}__server`, `${sql}__database`];

export interface SqlChoice {
  /** Settings to add, and settings to remove, before the app loads. */
  readonly settings: Readonly<Record<string, string>>;
  readonly removed: readonly string[];
  /** What `sas host` says about it on start. */
  readonly note: string;
}

/**
 * SQL Server cannot run everywhere `sas host` does. Without a SQL connection, or with one naming a
 * server on this machine that does not answer, the app gets the orders table in a SQLite file in the
 * data folder instead (`OrdersSql__sqliteFile`), and the host says so.
 */
export async function embeddedOrders(
  settings: Readonly<Record<string, string>>,
  data: string,
): Promise<SqlChoice> {
  const file = join(data, "orders.db");
  const embedded = (why: string): SqlChoice => ({
    settings: { [`${sql}__sqliteFile`]: file },
    removed: SQL_SETTINGS.filter((name) => settings[name] !== undefined),
    note: `SQL: ${why}, so the orders table is the embedded one in ${file}`,
  });
  if (settings[`${sql}__sqliteFile`]) {
    return { settings: {}, removed: [], note: `SQL: the orders table in ${settings[`${sql}__sqliteFile`]}` };
  }
  const connectionString = settings[sql];
  const server = connectionString ? serverOf(connectionString) : settings[`${sql}__server`];
  if (!server) return embedded(`no ${sql} connection is set`);
  const local = localServer(server);
  if (!local) return { settings: {}, removed: [], note: `SQL: ${server}, as ${sql} says` };
  if (await answers(local.host, local.port)) {
    return { settings: {}, removed: [], note: `SQL: the server answering at ${local.host}:${local.port}` };
  }
  return embedded(`nothing answers at ${local.host}:${local.port}, where ${sql} points`);
}

function serverOf(connectionString: string): string | undefined {
  for (const part of connectionString.split(";")) {
    const [key = "", ...rest] = part.split("=");
    if (["server", "data source", "address", "addr"].includes(key.trim().toLowerCase()))
      return rest.join("=").trim();
  }
  return undefined;
}

/** `localhost,1433`, `tcp:127.0.0.1`, `(local)`: a server on this machine, with its port (default 1433). */
function localServer(server: string): { host: string; port: number } | undefined {
  const [name = "", port] = server.replace(/^tcp:/i, "").split(",");
  const host = name.trim().toLowerCase();
  if (!["localhost", "127.0.0.1", "(local)", "."].includes(host)) return undefined;
  return { host: host === "localhost" ? "localhost" : "127.0.0.1", port: port ? Number(port) : 1433 };
}
