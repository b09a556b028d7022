import { classifyCell, type CellClass, type Classification, type ClassifyOptions } from "./classify.js";
import { identifierKey } from "../spec/identifier-key.js";
import { RecordReader, type CellBatch, type TextBlock } from "../csv/record-reader.js";
import type { ListPiece } from "./row-source.js";
import { duplicateReason, type RowClassifier } from "./row-classifier.js";
import type { RowTally } from "./summary.js";

/** What a block classifier needs to know, the same in every thread. */
export interface BlockSettings {
  /** Field delimiter; undefined for a plain list. */
  delimiter: string | undefined;
  /** The phone column, 0-based. */
  column: number;
  classify: ClassifyOptions;
  /** Send every cell back too: the rejects file shows values. */
  keepValues: boolean;
  /** With keepValues: the column (0-based) whose cells identify a row in the rejects file; none when undefined. */
  idColumn?: number | undefined;
}

/**
 * A block's rows, classified and packed into typed arrays, so a worker's answer
 * crosses to the main thread as a few buffers instead of an object per row
 * (structured-cloning objects cost more than classifying them).
 */
export interface ClassifiedBlock {
  lines: Int32Array;
  /** Index into CELL_CLASSES, with the FLAGS of the cell's classification. */
  codes: Uint8Array;
  /** The identifier key of each kept row (see identifierKey), NaN for the others and for string keys. */
  keys: Float64Array;
  /** [row, key] for kept rows whose identifier is longer than a double holds. */
  longKeys: Array<[number, string]>;
  /** Index into `reasons` per row; 0 = none. */
  reasonIndex: Uint16Array;
  reasons: string[];
  /** [row, sharedRegion, extension] for the few rows with either ("" = absent). */
  extras: Array<[number, string, string]>;
  /** The cells joined with NUL (which never occurs in a decoded list), when keepValues. */
  values: string | undefined;
  /** The id column's cells, joined the same way, when keepValues and the settings name one. */
  ids: string | undefined;
}

const CELL_CLASSES: readonly CellClass[] = ["kept", "blank", "invalid", "no_code", "other_country"];
const CLASS_CODE: Readonly<Record<CellClass, number>> = { kept: 0, blank: 1, invalid: 2, no_code: 3, other_country: 4 };
const CLASS_MASK = 0x07;
/** Bits above the class index for what a Classification says besides its class. */
const FLAGS = { spreadsheetExpanded: 0x08, voteNational: 0x10, voteInternational: 0x20, ambiguous: 0x40, national: 0x80 } as const;
const SEPARATOR = "\0";

/** Classifies a piece of the list, whichever kind it is (see ListPiece). */
export function classifyPiece(piece: ListPiece, settings: BlockSettings): ClassifiedBlock {
  return "text" in piece ? classifyBlock(piece, settings) : classifyCells(piece, settings);
}

/**
 * Parses a block of complete records (a RecordReader started on the block's
 * first line reads exactly the rows the whole file holds there) and classifies
 * each row's phone cell with classifyCells.
 */
export function classifyBlock(block: TextBlock, settings: BlockSettings): ClassifiedBlock {
  const reader = new RecordReader(settings.delimiter, block.firstLine);
  const idColumn = settings.keepValues ? (settings.idColumn ?? -1) : -1;
  const batch = reader.pushCells(block.text, settings.column, idColumn);
  // Only a block at the end of a file can hold a record without a line end.
  const tail = reader.endCells(settings.column, idColumn);
  batch.lines.push(...tail.lines);
  batch.cells.push(...tail.cells);
  batch.ids?.push(...tail.ids!);
  return classifyCells(batch, settings);
}

/**
 * Classifies each phone cell with classifyCell. Pure; worker threads and the
 * in-thread path both run this, so they cannot disagree.
 */
function classifyCells({ lines, cells, ids }: CellBatch, settings: BlockSettings): ClassifiedBlock {
  const out: ClassifiedBlock = {
    lines: Int32Array.from(lines),
    codes: new Uint8Array(cells.length),
    keys: new Float64Array(cells.length).fill(Number.NaN),
    longKeys: [],
    reasonIndex: new Uint16Array(cells.length),
    reasons: [""],
    extras: [],
    values: settings.keepValues ? cells.join(SEPARATOR) : undefined,
    ids: settings.keepValues ? ids?.join(SEPARATOR) : undefined,
  };
  const reasonNumbers = new Map<string, number>();
  for (let i = 0; i < cells.length; i++) {
    const c = classifyCell(cells[i]!, settings.classify);
    out.codes[i] = CLASS_CODE[c.class] | flagsOf(c);
    if (c.class === "kept") {
      const key = identifierKey(c.identifier!);
      if (typeof key === "number") out.keys[i] = key;
      else out.longKeys.push([i, key]);
    }
    if (c.reason !== undefined) {
      let n = reasonNumbers.get(c.reason);
      if (n === undefined) {
        n = out.reasons.push(c.reason) - 1;
        reasonNumbers.set(c.reason, n);
      }
      out.reasonIndex[i] = n;
    }
    if (c.sharedRegion !== undefined || c.extension !== undefined) out.extras.push([i, c.sharedRegion ?? "", c.extension ?? ""]);
  }
  return out;
}

function flagsOf(c: Classification): number {
  return (
    (c.national ? FLAGS.national : 0) |
    (c.ambiguous ? FLAGS.ambiguous : 0) |
    (c.spreadsheetExpanded ? FLAGS.spreadsheetExpanded : 0) |
    (c.vote === "national" ? FLAGS.voteNational : c.vote === "international" ? FLAGS.voteInternational : 0)
  );
}

/** The buffers a ClassifiedBlock message hands over instead of copying. */
export function transferables(block: ClassifiedBlock): ArrayBuffer[] {
  return [block.lines, block.codes, block.keys, block.reasonIndex].map((array) => array.buffer as ArrayBuffer);
}

/** One admitted row, as admitBlock shows it. */
export interface AdmittedRow extends RowTally {
  line: number;
  reason: string | undefined;
  /** The cell as read, when the block kept values. */
  value: string | undefined;
  /** The row's id cell as read, when the block kept ids. */
  id: string | undefined;
}

/**
 * Unpacks a classified block row by row, in order, deciding duplicates with the
 * row classifier's own check (admitKept, duplicateReason), exactly as its
 * `admit` does for one cell. `visit` gets one reused object: read it, do not keep it.
 */
export function admitBlock(block: ClassifiedBlock, classifier: RowClassifier, visit: (row: Readonly<AdmittedRow>) => void): void {
  const values = block.values?.split(SEPARATOR);
  const ids = block.ids?.split(SEPARATOR);
  const row: AdmittedRow = {
    line: 0,
    class: "kept",
    national: false,
    vote: undefined,
    ambiguous: false,
    spreadsheetExpanded: false,
    sharedRegion: undefined,
    extension: undefined,
    reason: undefined,
    value: undefined,
    id: undefined,
  };
  let extra = 0;
  let long = 0;
  for (let i = 0; i < block.codes.length; i++) {
    const code = block.codes[i]!;
    row.line = block.lines[i]!;
    row.class = CELL_CLASSES[code & CLASS_MASK]!;
    row.national = (code & FLAGS.national) !== 0;
    row.ambiguous = (code & FLAGS.ambiguous) !== 0;
    row.spreadsheetExpanded = (code & FLAGS.spreadsheetExpanded) !== 0;
    row.vote = code & FLAGS.voteNational ? "national" : code & FLAGS.voteInternational ? "international" : undefined;
    row.reason = block.reasonIndex[i] === 0 ? undefined : block.reasons[block.reasonIndex[i]!];
    row.value = values?.[i];
    row.id = ids?.[i];
    row.sharedRegion = undefined;
    row.extension = undefined;
    if (block.extras[extra]?.[0] === i) {
      const [, sharedRegion, extension] = block.extras[extra++]!;
      if (sharedRegion !== "") row.sharedRegion = sharedRegion;
      if (extension !== "") row.extension = extension;
    }
    if (row.class === "kept") {
      const key = Number.isNaN(block.keys[i]) ? block.longKeys[long++]![1] : block.keys[i]!;
      const excluded = classifier.belowMin(key);
      const firstLine = excluded === undefined ? classifier.admitKept(key, row.line) : undefined;
      if (excluded !== undefined) {
        row.class = "below_min_task";
        row.reason = excluded;
      } else if (firstLine !== undefined) {
        row.class = "duplicate";
        row.reason = duplicateReason(firstLine);
      }
    }
    visit(row);
  }
}
