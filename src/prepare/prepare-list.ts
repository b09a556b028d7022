import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { AtomicFile, checkDestination, listBeingRead, type DestinationRules } from "../results/atomic-file.js";
import { admitBlock, type ClassifiedBlock } from "./block-classifier.js";
import { createBlockPool, type BlockPool } from "./block-pool.js";
import { classifyCell, type Classification, type ClassifyOptions, type DigitsReading } from "./classify.js";
import { chooseColumn, chooseIdColumn, type ColumnChoice } from "./column.js";
import { countCountries, countryGroups, splitByCountry } from "./country-groups.js";
import { listFile, type ListFile } from "./input-source.js";
import { classifyOptionsOf, type PrepareOptions } from "./prepare-options.js";
import { RejectsWriter } from "./rejects-writer.js";
import { createRowClassifier, type RowClassifier } from "./row-classifier.js";
import { openRows } from "./row-reader.js";
import type { KnownDialect, ListFormat, RowSource } from "./row-source.js";
import { LIBPHONENUMBER_VERSION, type CountryGroupsRecord, type PreparationSettings } from "./settings.js";
import { countRow, emptySummary, type PrepareSummary } from "./summary.js";
import { UploadSpool, type UploadChunk, type UploadTarget } from "./upload-writer.js";

export interface PrepareResult {
  summary: PrepareSummary;
  /** The phone column (0-based index) and how it was chosen, for the CLI to report on stderr. */
  column: ColumnChoice;
  format: ListFormat;
  /** The upload file(s), in order; one (possibly empty) file unless the list was split (by size, or by country: CountryChunk). */
  chunks: UploadChunk[];
  settings: PreparationSettings;
}

/**
 * Turns a list into exactly what the service should check: reads it (streaming),
 * picks the phone column, classifies every row, writes the kept identifiers
 * (deduplicated, first-seen order) as upload file(s) and, optionally, every other
 * row to a rejects CSV. Every data row is counted in exactly one class of the summary.
 *
 * Ambiguous bare digit strings are read as --digits-as says, or else by the list's
 * convention, which only the whole list shows. So the list is read once reading
 * them with their calling code (the tie's answer) while the votes are counted and,
 * when the majority reads nationally and there were ambiguous rows, once more with
 * that fixed: the second pass is exact, as the join is. A stream is spooled to a
 * private temp file first, since it can be read only once.
 *
 * An uploadPath or rejectsPath is refused before the list is read when checkDestination
 * says no (the list itself, a file that exists without `force`, …); the passes write
 * into a private directory, and each file is put in place complete once all is done.
 */
export async function prepareList(options: PrepareOptions): Promise<PrepareResult> {
  const classifyOptions = classifyOptionsOf(options);
  options.signal?.throwIfAborted();
  const destination = { force: options.force ?? false, reading: typeof options.source === "string" ? [listBeingRead(options.source)] : [] };
  for (const path of [options.uploadPath, options.rejectsPath]) if (path !== undefined) await checkDestination(path, destination);
  const work = await mkdtemp(join(tmpdir(), `bulkcheck-${process.pid}-`));
  try {
    const file = await listFile(options.source, work, options.signal);
    const outputs = {
      upload: await uploadTarget(options, file.name, work),
      // A pass may be redone, and what went out cannot be taken back: the rejects wait here until the end.
      rejectsPath: options.rejectsStream === undefined && options.rejectsPath === undefined ? undefined : join(work, "rejects.csv"),
    };
    const first = await preparePass(file, options, { ...classifyOptions, digitsAs: options.digitsAs ?? "international" }, outputs);
    const { votes, total } = first.summary.ambiguous;
    const digitsAs: DigitsReading = options.digitsAs ?? (votes.national > votes.international ? "national" : "international");
    let result =
      digitsAs === "national" && options.digitsAs === undefined && total > 0
        ? await preparePass(file, options, { ...classifyOptions, digitsAs }, outputs, first)
        : first;
    if (options.countryTasks) result = await byCountry(file, options, { ...classifyOptions, digitsAs }, outputs, result);
    const ambiguous = result.summary.ambiguous;
    ambiguous.resolved_by = options.digitsAs === undefined ? "convention" : "flag";
    ambiguous[digitsAs] = ambiguous.total;
    result.summary.encoding = result.format.encoding;
    result.summary.encoding_source = options.encoding === undefined || result.format.kind === "xlsx" ? "detected" : "forced";
    result.settings.digitsAs = digitsAs;
    if (outputs.rejectsPath !== undefined) {
      const { signal } = options;
      if (options.rejectsStream) await pipeline(createReadStream(outputs.rejectsPath), options.rejectsStream, { end: false, signal });
      else await copyAtomically(outputs.rejectsPath, options.rejectsPath!, destination, signal);
    }
    if (options.uploadPath !== undefined) {
      result.chunks = await publishUploads(result.chunks, options.uploadPath, destination, options.signal);
    }
    return result;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * `--country auto`: the kept numbers' countries are counted; when a country has too few
 * numbers for a task, the list is read once more with the grouping known, so those rows
 * are `below_min_task` (in the summary and the rejects, not in the upload); then the
 * upload list is split into one list per country. The grouping goes into the settings,
 * so a join and retry-failed read the rows the same way.
 */
async function byCountry(
  file: ListFile,
  options: PrepareOptions,
  classifyOptions: ClassifyOptions,
  outputs: PassOutputs,
  earlier: PrepareResult,
): Promise<PrepareResult> {
  const [list] = earlier.chunks;
  const groups = countryGroups(await countCountries(list!.path), options.countryTasks!);
  const result =
    Object.keys(groups.belowMin).length > 0 ? await preparePass(file, options, classifyOptions, outputs, earlier, groups) : earlier;
  result.settings.countryGroups = groups;
  result.summary.below_min_task ??= 0;
  result.chunks = await splitByCountry(result.chunks[0]!, outputs.upload, groups.maxTaskSize);
  return result;
}

interface PassOutputs {
  upload: UploadTarget;
  rejectsPath: string | undefined;
}

/** One reading of the whole list with `classifyOptions`; `earlier` (a first pass) fixes its dialect and column. */
async function preparePass(
  file: ListFile,
  options: PrepareOptions,
  classifyOptions: ClassifyOptions,
  outputs: PassOutputs,
  earlier?: PrepareResult,
  countryGroups?: CountryGroupsRecord,
): Promise<PrepareResult> {
  const known: Partial<KnownDialect> = earlier
    ? {
        delimiter: earlier.format.delimiter,
        hasHeader: earlier.format.hasHeader,
        encoding: earlier.format.encoding,
        sheet: earlier.format.sheet,
      }
    : { encoding: options.encoding, sheet: options.sheet };
  const rows = await openRows(file, known, options.signal);
  let pool: BlockPool | undefined;
  let rejects: RejectsWriter | undefined;
  let upload: UploadSpool | undefined;
  try {
    const column =
      earlier?.column ??
      chooseColumn({
        option: options.column,
        header: rows.header?.fields,
        columnCount: rows.columnCount,
        sample: rows.sample,
        isNumber: (cell) => isValidNumber(classifyCell(cell, classifyOptions)),
        sourceName: rows.name,
      });
    const settings = { ...settingsOf(classifyOptions, column, rows.format), ...(countryGroups ? { countryGroups } : {}) };
    const spool = await UploadSpool.create(outputs.upload);
    upload = spool;
    const classifier = createRowClassifier(settings, (key) => spool.add(key));
    const summary = emptySummary();
    const idColumn = outputs.rejectsPath === undefined ? undefined : chooseIdColumn(rows.header?.fields, rows.columnCount, column.index);
    rejects =
      outputs.rejectsPath === undefined
        ? undefined
        : await RejectsWriter.create(outputs.rejectsPath, { idLabel: idColumn?.label, safeCsv: options.safeCsv ?? false });
    const blockSettings = {
      delimiter: rows.format.delimiter,
      column: column.index,
      classify: classifyOptions,
      keepValues: rejects !== undefined,
      idColumn: idColumn?.index,
    };
    pool = createBlockPool(blockSettings, options.workers ?? 0);
    await classifyRows({
      rows,
      column: column.index,
      idColumn: idColumn?.index,
      pool,
      classifier,
      summary,
      rejects,
      upload: spool,
      onProgress: options.onProgress,
    });
    await rejects?.close();
    const chunks = await spool.finish(options.countryTasks ? undefined : options.maxTaskSize);
    upload = undefined;
    return { summary, column, format: rows.format, chunks, settings };
  } finally {
    rejects?.discard();
    await upload?.discard();
    await pool?.close();
    await rows.close();
  }
}

interface RowLoop {
  rows: RowSource;
  column: number;
  idColumn: number | undefined;
  pool: BlockPool;
  classifier: RowClassifier;
  summary: PrepareSummary;
  rejects: RejectsWriter | undefined;
  upload: UploadSpool;
  onProgress: ((rowsRead: number) => void) | undefined;
}

/**
 * Reads the file as pieces (blocks of complete records, or a workbook's cells) and
 * hands them to the pool, keeping a few in flight so reading here overlaps parsing
 * and classifying in the workers; results are admitted strictly in file order, which
 * is what makes duplicates and line numbers deterministic whatever the thread count.
 */
async function classifyRows(loop: RowLoop): Promise<void> {
  const inFlight: Array<Promise<ClassifiedBlock>> = [];
  const settle = async (result: Promise<ClassifiedBlock>): Promise<void> => {
    admitBlock(await result, loop.classifier, (row) => {
      countRow(loop.summary, row);
      // The record's number among the data rows: rows_read once this one is counted.
      if (row.class !== "kept") loop.rejects?.add(row, loop.summary.rows_read);
    });
    await loop.rejects?.flush();
    await loop.upload.flush();
    loop.onProgress?.(loop.summary.rows_read);
  };
  for await (const piece of loop.rows.pieces(loop.column, loop.idColumn)) {
    if ("text" in piece ? piece.text === "" : piece.cells.length === 0) continue;
    const result = loop.pool.classify(piece);
    // A failing worker rejects all its blocks at once; the first is rethrown when settled, the rest must not go unhandled.
    result.catch(() => undefined);
    inFlight.push(result);
    while (inFlight.length > 2 * loop.pool.threads) await settle(inFlight.shift()!);
  }
  while (inFlight.length > 0) await settle(inFlight.shift()!);
}

function isValidNumber(cell: Classification): boolean {
  return cell.class === "kept" || cell.class === "other_country" || (cell.class === "no_code" && cell.identifier !== undefined);
}

function settingsOf(options: ClassifyOptions, column: ColumnChoice, format: ListFormat): PreparationSettings {
  return {
    version: 1,
    ...(options.country === undefined ? {} : { country: options.country }),
    requireCountryCode: options.requireCountryCode ?? false,
    strictRegion: options.strictRegion ?? false,
    ...(options.anyRegion ? { anyRegion: true } : {}),
    ...(options.digitsAs === undefined ? {} : { digitsAs: options.digitsAs }),
    column: column.name === undefined ? { index: column.index } : { index: column.index, name: column.name },
    ...(format.delimiter === undefined ? {} : { delimiter: format.delimiter }),
    ...(format.sheet === undefined ? {} : { sheet: format.sheet }),
    hasHeader: format.hasHeader,
    encoding: format.encoding,
    libphonenumber: { version: LIBPHONENUMBER_VERSION, metadata: "max" },
  };
}

/**
 * Where the passes write the upload list: for uploadPath, a file of its name in the private
 * `work` directory (published when complete); else `<source>-upload.txt` in outputDir
 * (created) or in a new temp directory.
 */
async function uploadTarget(options: PrepareOptions, sourceName: string, work: string): Promise<UploadTarget> {
  if (options.uploadPath !== undefined) {
    const dir = join(work, "upload");
    await mkdir(dir);
    return { file: join(dir, basename(options.uploadPath)) };
  }
  const stem = basename(sourceName, extname(sourceName)).replace(/[^\w.-]+/g, "_") || "list";
  const base = `${stem}-upload`;
  if (options.outputDir !== undefined) {
    await mkdir(options.outputDir, { recursive: true });
    return { dir: options.outputDir, base };
  }
  return { dir: await mkdtemp(join(tmpdir(), "bulkcheck-")), base };
}

/** Puts each finished upload file beside uploadPath under its own name (split parts are named after uploadPath). */
async function publishUploads(
  chunks: readonly UploadChunk[],
  uploadPath: string,
  rules: DestinationRules,
  signal: AbortSignal | undefined,
): Promise<UploadChunk[]> {
  const published: UploadChunk[] = [];
  for (const chunk of chunks) {
    const path = join(dirname(uploadPath), basename(chunk.path));
    await copyAtomically(chunk.path, path, rules, signal);
    published.push({ ...chunk, path });
  }
  return published;
}

/** Copies a finished file to `path` through the atomic writer: complete or not at all. */
async function copyAtomically(from: string, path: string, rules: DestinationRules, signal: AbortSignal | undefined): Promise<void> {
  await AtomicFile.write(path, rules, (out) => pipeline(createReadStream(from), out, { signal })).catch((error: unknown) => {
    // An abort rejects the pipeline with an AbortError; what stopped it is the signal's reason.
    signal?.throwIfAborted();
    throw error;
  });
}
