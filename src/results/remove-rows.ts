import { createReadStream } from "node:fs";
import type { Writable } from "node:stream";
import { RecordReader } from "../csv/record-reader.js";
import { AtomicFile } from "./atomic-file.js";
import { openResultBody, textPieces } from "./result-body.js";
import { identifierValue } from "./result-rules.js";
import { isHeaderRow } from "./result-rows.js";
import { removeStaleTempFiles, tempPathFor, TempFiles } from "./temp-files.js";
import { DEFAULT_ZIP_LIMITS } from "./unzip.js";

/**
 * Rewrites a result file as it was downloaded (CSV or zip, with a header or without, in
 * UTF-8 or UTF-16) without the rows of `numbers`: every other record is written back as
 * its original text (a header too), one per line, in UTF-8 CSV, which every reader of
 * results reads as it read the original. The file is replaced whole (see AtomicFile), keeping
 * its mode; one without such rows is left as it is. Returns how many rows went (with
 * dryRun: would go, the file left as it is).
 */
export async function removeResultRows(path: string, numbers: ReadonlySet<number>, options: { dryRun?: boolean } = {}): Promise<number> {
  const temps = new TempFiles();
  await removeStaleTempFiles(path);
  try {
    // Read once to count (most files hold none of the numbers), and again to write what is kept.
    const rows = await keptRecords(path, numbers, temps);
    if (rows > 0 && !options.dryRun) await AtomicFile.write(path, { force: true, temps }, (out) => keptRecords(path, numbers, temps, out));
    return rows;
  } finally {
    temps.cleanupSync();
  }
}

/**
 * Reads the result at `path` and writes every non-empty record but the rows of `numbers` to
 * `out` (when given); returns how many rows of them there were. The identifier is the
 * column a header names `identifier`, or the first column of a file without a header (see
 * isHeaderRow).
 */
async function keptRecords(path: string, numbers: ReadonlySet<number>, temps: TempFiles, out?: Writable): Promise<number> {
  const body = await openResultBody(createReadStream(path), { ...DEFAULT_ZIP_LIMITS, spoolPath: tempPathFor(path, ".zip"), temps });
  const reader = new RecordReader(",");
  let identifierColumn: number | undefined;
  let removed = 0;
  const write = (text: string) => (out && !out.write(text) ? new Promise((resolve) => out.once("drain", resolve)) : undefined);
  try {
    const records = async function* () {
      for await (const text of textPieces(body.stream)) yield* reader.push(text);
      yield* reader.end();
    };
    for await (const { fields, raw } of records()) {
      if (raw === "") continue;
      if (identifierColumn === undefined) {
        const header = isHeaderRow(fields);
        identifierColumn = header ? fields.findIndex((name) => name.trim().toLowerCase() === "identifier") : 0;
        if (header) {
          await write(`${raw}\n`);
          continue;
        }
      }
      const identifier = (fields[identifierColumn] ?? "").trim();
      if (numbers.has(identifierValue(identifier, 0, identifier.length))) removed++;
      else await write(`${raw}\n`);
    }
    out?.end();
    return removed;
  } finally {
    await body.close();
  }
}
