import type { ResultRow, Store } from "../store/store.js";

/** Rows handed to the store at once. */
const BATCH_ROWS = 5000;

/**
 * Records a task's result in the ledger: `table` is the result as a table (the output
 * header first, `identifier` and then the product's columns and any the service added,
 * then the data rows), as the result readers give it. Returns the rows recorded.
 */
export async function recordResult(
  store: Store,
  taskRef: number,
  table: AsyncIterable<readonly string[]>,
  now: () => number,
): Promise<number> {
  let columns: readonly string[] | undefined;
  const rows = (async function* () {
    let batch: ResultRow[] = [];
    for await (const row of table) {
      if (columns === undefined) {
        columns = row.slice(1);
        continue;
      }
      batch.push({ identifier: row[0] ?? "", values: row.slice(1) });
      if (batch.length === BATCH_ROWS) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  })();
  // The header is read before the first batch, so the columns are known when the store needs them.
  const first = await rows.next();
  const batches = (async function* () {
    if (!first.done) yield first.value;
    yield* rows;
  })();
  return store.recordResults(taskRef, columns ?? [], batches, new Date(now()).toISOString());
}
