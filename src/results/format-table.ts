import { createRequire } from "node:module";
import type TableConstructor from "cli-table3";
import type stringWidthFunction from "string-width";
import { styled, terminalText } from "../ansi.js";
import { count } from "../format-count.js";

export interface TableRenderOptions {
  /** Data rows shown; the rest are read (so the summary counts them) but not shown. */
  rows: number;
  /** Styles the header; off by default so piped or logged output has no escape codes. */
  colour?: boolean;
  /** The terminal's width in columns; the table is made to fit it (default 80). */
  width?: number;
}

/** Result columns a narrow terminal does without first, least useful first; then columns from the right. */
const RESULT_DROP_ORDER = ["underlying_carrier", "city", "region", "country_code"];

/** A quick look: the header and the first `rows` data rows as a table that fits the terminal. */
export async function* renderTable(table: AsyncIterable<readonly string[]>, options: TableRenderOptions): AsyncGenerator<string> {
  let header: string[] | undefined;
  const shown: string[][] = [];
  for await (const row of table) {
    if (!header) header = [...row];
    else if (shown.length < options.rows) shown.push([...row]);
  }
  const columns = (header ?? []).map((name, index, all) => {
    const named = RESULT_DROP_ORDER.indexOf(name);
    // identifier is never dropped or shortened: it is the key a user looks up.
    if (index === 0) return { header: name, whole: true };
    return { header: name, dropOrder: named === -1 ? RESULT_DROP_ORDER.length + all.length - index : named };
  });
  yield `${boxedTable(columns, shown, { colour: options.colour ?? false, width: options.width })}\n`;
}

/** A table column and how it gives way on a narrow terminal. */
export interface TableColumn {
  header: string;
  /** Columns with a drop order are left out, lowest first, while the table is too wide; others always stay. */
  dropOrder?: number;
  /** Never shortened with "…" (an id a user copies). */
  whole?: boolean;
  /** Counts: shown with thousands separators in the boxed table (tab-separated output keeps the plain digits). */
  count?: boolean;
}

export interface ColumnFit {
  /** Indexes of the columns shown, in order. */
  shown: number[];
  /** Content width of each shown column. */
  widths: number[];
}

/** A column as fitting sees it. */
export interface ColumnWidths {
  /** Its widest cell, header included. */
  natural: number;
  dropOrder?: number | undefined;
  whole?: boolean | undefined;
}

/** Narrowest a shortened column gets: one character and the ellipsis. */
const MIN_WIDTH = 2;

/** What a box adds to its columns' contents: "│ " before each, " " after each, and the closing "│". */
function boxWidth(widths: readonly number[]): number {
  return widths.reduce((sum, width) => sum + width + 3, 1);
}

/**
 * Fits columns into `maxWidth` without wrapping a row. Dropping a column the
 * table can do without reads better than cutting every cell short, so the
 * droppable columns go first (lowest drop order first) until the rest fit;
 * only then is the widest shortenable column cut, one step at a time.
 */
function fitColumns(columns: readonly ColumnWidths[], maxWidth: number): ColumnFit {
  let shown = columns.map((_, index) => index);
  const droppable = shown
    .filter((index) => columns[index]!.dropOrder !== undefined)
    .sort((a, b) => columns[a]!.dropOrder! - columns[b]!.dropOrder!);
  for (const index of droppable) {
    if (boxWidth(shown.map((kept) => columns[kept]!.natural)) <= maxWidth) break;
    shown = shown.filter((kept) => kept !== index);
  }
  const widths = shown.map((index) => columns[index]!.natural);
  while (boxWidth(widths) > maxWidth) {
    let widest = -1;
    for (const [position, index] of shown.entries()) {
      if (columns[index]!.whole || widths[position]! <= MIN_WIDTH) continue;
      if (widest === -1 || widths[position]! > widths[widest]!) widest = position;
    }
    if (widest === -1) break; // nothing left to shorten: the terminal will have to wrap
    widths[widest]! -= 1;
  }
  return { shown, widths };
}

let Table: typeof TableConstructor | undefined;
let stringWidth: typeof stringWidthFunction | undefined;

/** Border characters with no line between rows: the header is separated once, by hand. */
const NO_ROW_LINES = { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" };

/**
 * A boxed table that fits `width` columns (see fitColumns), with the header in
 * bold cyan when `colour` is on (see `styled` for why not cli-table3's `style`),
 * a line under the header and none between rows.
 */
export function boxedTable(
  columns: ReadonlyArray<string | TableColumn>,
  rows: ReadonlyArray<readonly string[]>,
  options: { colour: boolean; width?: number | undefined },
): string {
  // cli-table3 and string-width (CommonJS) are loaded on the first table drawn: piped output never needs them.
  const require = createRequire(import.meta.url);
  Table ??= require("cli-table3") as typeof TableConstructor;
  stringWidth ??= require("string-width") as typeof stringWidthFunction;
  const measure = stringWidth;
  // A boxed table is for a terminal, and its cells and headers are the service's or a file's text.
  const specs: TableColumn[] = columns
    .map((column) => (typeof column === "string" ? { header: column } : column))
    .map((spec) => ({ ...spec, header: cellText(spec.header) }));
  const cells = rows.map((row) =>
    specs.map((spec, index) => {
      const cell = row[index] ?? "";
      return cellText(spec.count && /^\d+$/.test(cell) ? count(Number(cell)) : cell);
    }),
  );
  const { shown, widths } = fitColumns(
    specs.map((spec, index) => ({
      natural: Math.max(measure(spec.header), ...cells.map((row) => measure(row[index]!))),
      dropOrder: spec.dropOrder,
      whole: spec.whole,
    })),
    options.width ?? 80,
  );
  const head = shown.map((index, position) => {
    const text = shorten(specs[index]!.header, widths[position]!, measure);
    return options.colour ? styled("bold", styled("cyan", text)) : text;
  });
  const table = new Table({ head, chars: NO_ROW_LINES, style: { head: [], border: [] } });
  for (const row of cells) table.push(shown.map((index, position) => shorten(row[index]!, widths[position]!, measure)));
  const [top = "", header = "", ...rest] = table.toString().split("\n");
  return [top, header, top.replace("┌", "├").replaceAll("┬", "┼").replace("┐", "┤"), ...rest].join("\n");
}

/** A cell as a terminal may show it: on one line, every control character a visible escape (see terminalText). */
export function cellText(text: string): string {
  return terminalText(text.replace(/[\r\n\t]/g, " "), { singleLine: true });
}

/** `text` (a cell's text, see cellText) cut to `width` display columns, ending in "…" when cut. */
function shorten(flat: string, width: number, measure: (text: string) => number): string {
  if (measure(flat) <= width) return flat;
  let cut = "";
  for (const char of flat) {
    if (measure(cut + char) > width - 1) break;
    cut += char;
  }
  return `${cut}…`;
}
