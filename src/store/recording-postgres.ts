import { ERASED_FOR_TASK, ERASURE_LOCK, ErasedNumbers } from "./erasures.js";
import type { ConnectionEnv } from "./postgres-connection.js";
import { PostgresDb } from "./postgres-db.js";
import type { RecordedTask } from "./recording-sqlite.js";
import type { KeyOrderedResults } from "./result-values.js";
import { RESULT_VALUE_COLUMNS } from "./result-values.js";
import { numbered } from "./sql-session.js";

/** Rows per statement: a few round trips per million rows, each a JSON text of a few megabytes. */
const ROWS_PER_STATEMENT = 20_000;
const VALUE_COLUMNS = [...RESULT_VALUE_COLUMNS, "extra"] as const;
/**
 * The rows arrive as one JSON array of arrays (number, then the stored values) and are
 * inserted in that order; a row a recording cut short left there, or another process's
 * recording of the same task, is kept, not doubled.
 */
const INSERT = `INSERT INTO bulkcheck.results (task_ref, identifier, ${VALUE_COLUMNS.join(", ")})
  SELECT $1, (row ->> 0)::bigint, ${RESULT_VALUE_COLUMNS.map((_, at) => `row ->> ${at + 1}`).join(", ")}, (row ->> ${VALUE_COLUMNS.length})::json
  FROM json_array_elements($2::json) AS row
  ON CONFLICT DO NOTHING`;

/**
 * Records a task's result in a team's ledger (the store at `location`, the password from it
 * or from `env`: never shown) on a connection of its own: the rows in key order straight into
 * `results` and the task marked recorded, in one transaction, so a kill at any moment leaves
 * the task unrecorded or recorded whole. Numbers `ledger forget` erased since the task was given
 * them (see erasures.ts) are left out, read under the lock a forget takes alone. `signal` stops connecting (as the command's own
 * connection does on Ctrl-C, SIGTERM or --timeout).
 */
export async function recordIntoPostgres(
  location: string,
  env: ConnectionEnv,
  rows: KeyOrderedResults,
  task: RecordedTask,
  signal: AbortSignal,
): Promise<void> {
  const db = await PostgresDb.open(location, env, { signal });
  try {
    await db.transaction(async ({ query }) => {
      await query(`SELECT pg_advisory_xact_lock_shared(${ERASURE_LOCK})`);
      const erased = ErasedNumbers.of(await query(numbered(ERASED_FOR_TASK), [task.ref, task.ref]));
      for (let first = 0; first < rows.size; first += ROWS_PER_STATEMENT) {
        const batch: unknown[] = [];
        for (let at = first; at < Math.min(rows.size, first + ROWS_PER_STATEMENT); at++) {
          if (!erased?.has(rows.identifierAt(at))) batch.push([rows.identifierAt(at), ...rows.valuesAt(at)]);
        }
        await query(INSERT, [task.ref, JSON.stringify(batch)]);
      }
      await query("UPDATE bulkcheck.tasks SET recorded_at = $1, columns = $2 WHERE ref = $3", [
        task.at,
        JSON.stringify(task.columns),
        task.ref,
      ]);
    });
  } finally {
    await db.close();
  }
}
