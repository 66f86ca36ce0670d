/** The durable store's SQL, prepared once per database, in groups by table. */
import { BOUND_LIMIT } from "../../src/adapters/sqlite/bound-limit.js";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import type { RuntimeStatus } from "../../src/ports/durable-client.js";
import type { ActivityWork, InstanceRow, TimerWork } from "./store-records.js";

export type StoreStatements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: EmbeddedDatabase) {
  return { ...instanceStatements(db), ...workStatements(db), ...entityStatements(db) };
}

interface RawInstance {
  instance_id: string;
  execution_id: string;
  name: string;
  status: RuntimeStatus;
  input: string | null;
  output: string | null;
  failure: string | null;
  custom_status: string | null;
  created_at: number;
  updated_at: number;
  parent_instance_id: string | null;
  parent_execution_id: string | null;
  parent_task_id: number | null;
}

export function toInstance(row: RawInstance): InstanceRow {
  return {
    instanceId: row.instance_id,
    executionId: row.execution_id,
    name: row.name,
    status: row.status,
    input: row.input,
    output: row.output,
    failure: row.failure,
    customStatus: row.custom_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.parent_instance_id !== null && row.parent_execution_id !== null && row.parent_task_id !== null
      ? {
          parent: {
            instanceId: row.parent_instance_id,
            executionId: row.parent_execution_id,
            taskId: row.parent_task_id,
          },
        }
      : {}),
  };
}

/** A statement prepared on `db`, its parameters and row typed. */
function preparer(db: EmbeddedDatabase) {
  return <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
}

/** Instances, their histories and their inboxes. */
function instanceStatements(db: EmbeddedDatabase) {
  const s = preparer(db);
  return {
    instance: s<[string], RawInstance>("SELECT * FROM df_instances WHERE instance_id = ?"),
    history: s<[string], { events: string }>(
      "SELECT events FROM df_history WHERE instance_id = ? ORDER BY episode",
    ),
    appendHistory: s<[string, string, string], { episode: number }>(
      `INSERT INTO df_history (instance_id, episode, events)
       SELECT ?, COALESCE(MAX(episode), 0) + 1, ? FROM df_history WHERE instance_id = ?
       RETURNING episode`,
    ),
    insertHistory: s<[string, number, string]>(
      "INSERT INTO df_history (instance_id, episode, events) VALUES (?, ?, ?)",
    ),
    inboxes: s<[], { id: number; instance_id: string; event: string }>(
      "SELECT id, instance_id, event FROM df_inbox ORDER BY id",
    ),
    addInbox: s<[string, string, string]>(
      "INSERT INTO df_inbox (instance_id, execution_id, event) VALUES (?, ?, ?)",
    ),
    consumeInbox: s<[string, number]>("DELETE FROM df_inbox WHERE instance_id = ? AND id <= ?"),
    upsertInstance: s<
      [
        string,
        string,
        string,
        string,
        string | null,
        number,
        number,
        string | null,
        string | null,
        number | null,
      ]
    >(
      `INSERT INTO df_instances (instance_id, execution_id, name, status, input, created_at, updated_at,
         parent_instance_id, parent_execution_id, parent_task_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (instance_id) DO UPDATE SET execution_id = excluded.execution_id, name = excluded.name,
         status = excluded.status, input = excluded.input, output = NULL, failure = NULL,
         custom_status = NULL, created_at = excluded.created_at, updated_at = excluded.updated_at,
         parent_instance_id = excluded.parent_instance_id, parent_execution_id = excluded.parent_execution_id,
         parent_task_id = excluded.parent_task_id`,
    ),
    deleteStaleInbox: s<[string]>(
      "DELETE FROM df_inbox WHERE instance_id = ? AND json_extract(event, '$.EventType') != 15",
    ),
    updateInstance: s<[RuntimeStatus, string | null, string | null, string | null, number, string, string]>(
      `UPDATE df_instances SET status = ?, output = ?, failure = ?, custom_status = ?, updated_at = ?
       WHERE instance_id = ? AND execution_id = ?`,
    ),
    deleteInbox: s<[string]>("DELETE FROM df_inbox WHERE instance_id = ?"),
    deleteHistory: s<[string]>("DELETE FROM df_history WHERE instance_id = ?"),
    deleteInstance: s<[string]>("DELETE FROM df_instances WHERE instance_id = ?"),
    createdBefore: s<[number], RawInstance>(
      "SELECT * FROM df_instances WHERE created_at < ? ORDER BY created_at, instance_id",
    ),
    finishedBefore: s<[number], { instance_id: string }>(
      `SELECT instance_id FROM df_instances
       WHERE status IN ('Completed', 'Failed', 'Terminated') AND created_at < ? ORDER BY created_at`,
    ),
  };
}

/** Outstanding activities and timers. */
function workStatements(db: EmbeddedDatabase) {
  const s = preparer(db);
  return {
    addActivity: s<[string, string, number, string, string | null]>(
      "INSERT INTO df_activities (instance_id, execution_id, task_id, name, input) VALUES (?, ?, ?, ?, ?)",
    ),
    activities: s<[], ActivityWork>(
      `SELECT id, instance_id AS instanceId, execution_id AS executionId, task_id AS taskId, name, input
       FROM df_activities ORDER BY id`,
    ),
    deleteActivity: s<[number]>("DELETE FROM df_activities WHERE id = ?"),
    takeActivity: s<[number], { instanceId: string; executionId: string }>(
      "DELETE FROM df_activities WHERE id = ? RETURNING instance_id AS instanceId, execution_id AS executionId",
    ),
    addTimer: s<[string, string, number, number]>(
      "INSERT INTO df_timers (instance_id, execution_id, timer_id, fire_at) VALUES (?, ?, ?, ?)",
    ),
    timers: s<[], TimerWork>(
      "SELECT id, instance_id AS instanceId, timer_id AS timerId, fire_at AS fireAt FROM df_timers ORDER BY fire_at",
    ),
    timer: s<[number], TimerWork & { executionId: string }>(
      `SELECT id, instance_id AS instanceId, execution_id AS executionId, timer_id AS timerId, fire_at AS fireAt
       FROM df_timers WHERE id = ?`,
    ),
    deleteTimer: s<[number]>("DELETE FROM df_timers WHERE id = ?"),
    cancelTimer: s<[string, number]>("DELETE FROM df_timers WHERE instance_id = ? AND timer_id = ?"),
    deleteActivities: s<[string]>("DELETE FROM df_activities WHERE instance_id = ?"),
    deleteTimers: s<[string]>("DELETE FROM df_timers WHERE instance_id = ?"),
  };
}

/** Durable entities: their state and the operations queued for them. */
function entityStatements(db: EmbeddedDatabase) {
  const s = preparer(db);
  return {
    addEntityRequest: s<[string, string]>(
      "INSERT INTO df_entity_requests (entity_id, request) VALUES (?, ?)",
    ),
    entityRequests: s<[string, number], { id: number; request: string }>(
      `SELECT id, request FROM df_entity_requests WHERE entity_id = ? ORDER BY id LIMIT ${BOUND_LIMIT}`,
    ),
    entitiesWithRequests: s<[], { entity_id: string }>(
      "SELECT entity_id FROM df_entity_requests GROUP BY entity_id ORDER BY MIN(id)",
    ),
    doneEntityRequests: s<[string, number]>("DELETE FROM df_entity_requests WHERE entity_id = ? AND id <= ?"),
    entity: s<[string], { state: string | null }>("SELECT state FROM df_entities WHERE entity_id = ?"),
    saveEntity: s<[string, string | null, number]>(
      `INSERT INTO df_entities (entity_id, state, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (entity_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    ),
    deleteEntity: s<[string]>("DELETE FROM df_entities WHERE entity_id = ?"),
  };
}
