import { createRequire } from "node:module";
import type TableConstructor from "cli-table3";
import { styled } from "../ansi.js";

export interface TableRenderOptions {
  /** Data rows shown; the rest are read (so the summary counts them) but not shown. */
  rows: number;
  /** Styles the header; off by default so piped or logged output has no escape codes. */
  colour?: boolean;
}

/** A quick look: the header and the first `rows` data rows as a boxed cli-table3 table. */
export async function* renderTable(table: AsyncIterable<readonly string[]>, options: TableRenderOptions): AsyncGenerator<string> {
  let header: string[] | undefined;
  const shown: string[][] = [];
  for await (const row of table) {
    if (!header) header = [...row];
    else if (shown.length < options.rows) shown.push([...row]);
  }
  yield `${boxedTable(header ?? [], shown, options.colour ?? false)}\n`;
}

let Table: typeof TableConstructor | undefined;

/** A boxed table with the header in bold cyan when `colour` is on (see `styled` for why not cli-table3's `style`). */
export function boxedTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, colour: boolean): string {
  const head = colour ? headers.map((cell) => styled("bold", styled("cyan", cell))) : [...headers];
  // cli-table3 (CommonJS) is loaded on the first table drawn: piped output never needs it.
  Table ??= createRequire(import.meta.url)("cli-table3") as typeof TableConstructor;
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push([...row]);
  return table.toString();
}
