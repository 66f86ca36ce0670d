/**
 * A LIMIT taken from a parameter, hidden from the query planner: SQLite built with STAT4 (as
 * better-sqlite3 is) prepares a statement again at every run whose bare `LIMIT ?` was bound, which made
 * a queue's receive cost four times what it does and a page of records a quarter more.
 */
export const BOUND_LIMIT = "CAST(? AS INTEGER)";
