import type { Writable } from "node:stream";
import { AtomicFile } from "../results/atomic-file.js";
import { renderXlsx } from "../results/format-xlsx.js";
import { rendererFor, writeText } from "../results/render.js";
import { TempFiles } from "../results/temp-files.js";
import type { LedgerFilter, Store } from "../store/store.js";
import { ledgerTable } from "./numbers.js";

export type ExportFormat = "csv" | "tsv" | "jsonl" | "json" | "xlsx";

/** A file, written atomically, or a stream the caller keeps (stdout). */
export type ExportDestination = { path: string; force: boolean } | { stream: Writable };

/**
 * Writes the ledger's results (as filtered) as a table: where each came from (number,
 * product, when checked, task, service and profile), then the result columns. Streams:
 * the store is read in batches as the output takes them.
 */
export async function exportLedger(
  store: Store,
  filter: LedgerFilter,
  format: ExportFormat,
  destination: ExportDestination,
): Promise<{ rows: number }> {
  let rows = -1;
  const counted = (async function* () {
    for await (const row of ledgerTable(store.ledger.export(filter))) {
      rows++;
      yield row;
    }
  })();
  await writeTable(counted, format, destination);
  return { rows: Math.max(0, rows) };
}

/** Writes a table (its header first) in a format, to a file (atomically) or to a stream the caller keeps. */
export async function writeTable(
  table: AsyncIterable<readonly string[]>,
  format: ExportFormat,
  destination: ExportDestination,
): Promise<void> {
  const chunks = format === "xlsx" ? renderXlsx(table) : rendererFor({ format })(table);
  if ("stream" in destination) await writeText(chunks, destination.stream, { end: false });
  else await AtomicFile.write(destination.path, { force: destination.force, temps: new TempFiles() }, (out) => writeText(chunks, out));
}
