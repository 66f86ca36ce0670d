import { join } from "node:path";
import { CONNECTION_NAMES } from "../../src/config/names.js";
import { answers } from "../http/port-probe.js";

const sql = CONNECTION_NAMES.sql;
const SQL_SETTINGS = [sql, `${sql}__server`, `${sql}__database`];

/**
 * The host's own setting naming the SQLite file of the orders table it hands the app. Read by `sas host`
 * only, never by the app, which takes the table itself (src/config/azure-settings.ts, HOSTED_ORDERS).
 */
export const ORDERS_FILE_SETTING = `${sql}__sqliteFile`;

export interface SqlChoice {
  /** The SQLite file whose orders table the host hands the app; undefined: the app connects to SQL Server. */
  readonly file: string | undefined;
  /** Settings to remove before the app loads: its SQL settings, when the host hands it a table instead. */
  readonly removed: readonly string[];
  /** What `sas host` says about it on start. */
  readonly note: string;
}

/**
 * SQL Server cannot run everywhere `sas host` does. Without a SQL connection, or with one naming a
 * server on this machine that does not answer, the host hands the app an orders table in a SQLite file in
 * the data folder instead (or in the file `OrdersSql__sqliteFile` names), and says so.
 */
export async function embeddedOrders(
  settings: Readonly<Record<string, string>>,
  data: string,
): Promise<SqlChoice> {
  const removed = [...SQL_SETTINGS, ORDERS_FILE_SETTING].filter((name) => settings[name] !== undefined);
  const embedded = (why: string, file = join(data, "orders.db")): SqlChoice => ({
    file,
    removed,
    note: `SQL: ${why}, so the orders table is the embedded one in ${file}`,
  });
  const named = settings[ORDERS_FILE_SETTING];
  if (named) return embedded(`${ORDERS_FILE_SETTING} names a file`, named);
  const connectionString = settings[sql];
  const server = connectionString ? serverOf(connectionString) : settings[`${sql}__server`];
  if (!server) return embedded(`no ${sql} connection is set`);
  const local = localServer(server);
  if (!local) return { file: undefined, removed: [], note: `SQL: ${server}, as ${sql} says` };
  if (await answers(local.host, local.port)) {
    return { file: undefined, removed: [], note: `SQL: the server answering at ${local.host}:${local.port}` };
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
