import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceType } from "../spec/products.js";
import { resultTable, type ResultSource } from "./result-table.js";
import { TempFiles, removeStaleTempFiles, tempPathFor } from "./temp-files.js";
import { DEFAULT_ZIP_LIMITS } from "./zip-limits.js";

/**
 * The rows of one or more results (header first, spec column order), for code
 * that consumes results rather than writing them out: the join and retry-failed.
 * A zipped body is spooled to the OS temp directory and removed afterwards (or, after
 * a kill, by the next reader).
 */
export async function* readResults(
  sources: readonly ResultSource[],
  options: { serviceType: ServiceType; signal?: AbortSignal; checkedAt?: boolean },
): AsyncGenerator<readonly string[]> {
  const temps = new TempFiles();
  const spoolTarget = join(tmpdir(), "bulkcheck-result");
  // What a killed reader spooled is recognisable by its name: the next reader removes it.
  await removeStaleTempFiles(spoolTarget);
  try {
    yield* resultTable(sources, {
      ...DEFAULT_ZIP_LIMITS,
      serviceType: options.serviceType,
      temps,
      spoolPath: () => tempPathFor(spoolTarget, ".zip"),
      sources: [],
      signal: options.signal,
      ...(options.checkedAt ? { checkedAt: true } : {}),
    });
  } finally {
    temps.cleanupSync();
  }
}

/**
 * Reads one result through the rules of result-rules.ts, keeping nothing: for a result
 * fetched now and written out later, checked while what its task was given is known.
 * @throws ResultFileError when the result is unusable or breaks the rules.
 */
export async function checkResult(source: ResultSource, options: { serviceType: ServiceType; signal?: AbortSignal }): Promise<void> {
  for await (const _row of readResults([source], options));
}

/** identifier → the rest of its result row; what the join holds in memory (and nothing else). */
export async function resultMap(
  rows: AsyncIterable<readonly string[]>,
): Promise<{ columns: readonly string[]; byIdentifier: Map<string, readonly string[]> }> {
  let columns: readonly string[] = [];
  const byIdentifier = new Map<string, readonly string[]>();
  for await (const row of rows) {
    if (columns.length === 0) {
      columns = row.slice(1);
      continue;
    }
    if (row[0]) byIdentifier.set(row[0], row.slice(1));
  }
  return { columns, byIdentifier };
}
