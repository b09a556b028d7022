import type { CellBatch, SourceRecord, TextBlock } from "../csv/record-reader.js";
import type { TextEncoding } from "./decode.js";

/*
 * What opening a list gives, whichever its kind: the text reader (row-reader.ts) and the
 * workbook reader (workbook-rows.ts) both produce a RowSource.
 */

export interface ListFormat {
  /**
   * `csv` when fields are split on a delimiter (with RFC 4180 quoting), `txt` for one
   * value per line, `xlsx` for a sheet of an Excel workbook.
   */
  kind: "txt" | "csv" | "xlsx";
  delimiter?: string;
  hasHeader: boolean;
  /** The text's encoding; `utf8` for a workbook, whose text is Unicode whatever its bytes. */
  encoding: TextEncoding;
  /** The sheet read, for a workbook. */
  sheet?: string;
}

/** A dialect decided earlier (stored in PreparationSettings), to read the same file the same way again. */
export interface KnownDialect {
  /** Absent for a plain list. */
  delimiter?: string;
  hasHeader: boolean;
  /** The encoding to read in; detected (detectEncoding) when absent. */
  encoding?: TextEncoding;
  /** For a workbook: the sheet's name, or its number from 1 (default: the first visible worksheet). */
  sheet?: string;
}

/**
 * A piece of the list to classify, which any thread can take: complete records as text
 * (parsed where they are classified), or a workbook's phone cells, already read.
 */
export type ListPiece = TextBlock | CellBatch;

/**
 * An opened list. Its records can be read once, either as whole records
 * (`batches`) or as pieces for classification (`pieces`); both see the same
 * rows and line numbers.
 */
export interface RowSource {
  name: string;
  /** Lower-case extension of the path or stream name ("" when none). */
  extension: string;
  /** Size in bytes when the source is a file. */
  size: number | undefined;
  format: ListFormat;
  /** The file's first line end, for writing rows back in its own style. Fields are quoted with `"`. */
  lineEnding: "\r\n" | "\n" | "\r";
  header: SourceRecord | undefined;
  /** The widest record seen in the sample (header included). */
  columnCount: number;
  /** The first data records (up to 200), for choosing the column; they are read again by the methods below. */
  sample: readonly SourceRecord[];
  /** Data records (header excluded) in file order, in the batches they were read in. */
  batches(): AsyncGenerator<SourceRecord[], void, undefined>;
  /**
   * The same records as pieces to classify by their cells of `column` (0-based): blocks of
   * text, each starting on a record boundary (see RecordReader.pushBlock), or a workbook's
   * cells, with `idColumn`'s cells as `ids` when one is given (text blocks carry every column).
   */
  pieces(column: number, idColumn?: number): AsyncGenerator<ListPiece, void, undefined>;
  /** Releases the file when the rows are not read to the end. */
  close(): Promise<void>;
}
