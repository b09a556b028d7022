/**
 * Groups an async sequence into arrays of up to `size` items. Renderers turn a batch
 * into one string, so the output stream sees a few large writes instead of one per row.
 */
export async function* batches<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Rows per rendered chunk: about 64 KiB of carrier CSV. */
export const BATCH_ROWS = 1024;
