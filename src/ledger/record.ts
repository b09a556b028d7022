import type { ResultRecorder } from "../results/read-results.js";
import type { Task } from "../spec/task.js";
import type { ResultRow, Scope, Store } from "../store/store.js";

/** Rows handed to the store at once. */
const BATCH_ROWS = 5000;

/**
 * A recorder for one task's result as it is read (see ResultSource.recorder): its rows go
 * to the ledger in batches while they stream to the output, and count only once the
 * whole result was read and kept to the rules (a result refused halfway is never reused).
 */
export function ledgerRecorder(store: Store, taskRef: number, now: () => number): ResultRecorder {
  let pending: ResultRow[] = [];
  let columns: readonly string[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    await store.ledger.add(taskRef, columns, rows);
  };
  return {
    async add(header, rows) {
      columns = header.slice(1);
      for (const row of rows) pending.push({ identifier: row[0] ?? "", values: row.slice(1) });
      if (pending.length >= BATCH_ROWS) await flush();
    },
    async finish(header) {
      columns = header.slice(1);
      await flush();
      await store.ledger.markRecorded(taskRef, columns, new Date(now()).toISOString());
    },
  };
}

/**
 * Records a whole result in the ledger: `table` is the result as the result readers
 * give it (the output header first, `identifier` and then the product's columns and any
 * the service added, then the data rows). Returns the rows recorded.
 */
export async function recordResult(
  store: Store,
  taskRef: number,
  table: AsyncIterable<readonly string[]>,
  now: () => number,
): Promise<number> {
  const recorder = ledgerRecorder(store, taskRef, now);
  let header: readonly string[] | undefined;
  let rows = 0;
  let batch: Array<readonly string[]> = [];
  for await (const row of table) {
    if (header === undefined) {
      header = row;
      continue;
    }
    batch.push(row);
    rows++;
    if (batch.length === BATCH_ROWS) {
      await recorder.add(header, batch);
      batch = [];
    }
  }
  if (header === undefined) return 0;
  await recorder.add(header, batch);
  await recorder.finish(header);
  return rows;
}

/**
 * Recorders for tasks as they are downloaded (`download`, a join, a report): a task the
 * store does not know yet (submitted elsewhere, or before the store) gets its row, dated
 * by this check; a task whose result the ledger already holds is not recorded again.
 */
export function recorderFor(store: Store, scope: Scope, now: () => number): (task: Task) => Promise<ResultRecorder | undefined> {
  return async (task) => {
    if (task.status !== "success") return undefined;
    const known = await store.tasks.byId(scope, task.id);
    const row =
      known ??
      (await store.tasks.add({ scope, taskId: task.id, product: task.product, ...(task.country ? { country: task.country } : {}) }));
    await store.tasks.update(row.ref, {
      status: task.status,
      total: task.total,
      ...(task.success_cnt === undefined ? {} : { successCnt: task.success_cnt }),
      ...(task.failure_cnt === undefined ? {} : { failureCnt: task.failure_cnt }),
      // The first check that saw it succeeded dates its results; a later download does not move them.
      ...(row.checkedAt === undefined ? { checkedAt: new Date(now()).toISOString() } : {}),
    });
    return known?.recordedAt === undefined ? ledgerRecorder(store, row.ref, now) : undefined;
  };
}
