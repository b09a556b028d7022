import { createRequire } from "node:module";
import type TableConstructor from "cli-table3";

export interface TableRenderOptions {
  /** Data rows shown; the rest are read (so the summary counts them) but not shown. */
  rows: number;
  /** Styles the header; off by default so piped or logged output has no escape codes. */
  colour?: boolean;
}

/** A quick look: the header and the first `rows` data rows as a boxed cli-table3 table. */
export async function* renderTable(
  table: AsyncIterable<readonly string[]>,
  options: TableRenderOptions,
): AsyncGenerator<string> {
  let header: string[] | undefined;
  const shown: string[][] = [];
  for await (const row of table) {
    if (!header) header = [...row];
    else if (shown.length < options.rows) shown.push([...row]);
  }
  yield `${boxedTable(header ?? [], shown, options.colour ?? false)}\n`;
}

let Table: typeof TableConstructor | undefined;

const BOLD_CYAN = ["\u001b[1;36m", "\u001b[22;39m"] as const;

/**
 * A boxed table with the header in bold cyan when `colour` is on. The escape codes
 * are written here rather than through cli-table3's `style`, because cli-table3's
 * colour library switches itself off whenever the process's own stdout is not a
 * terminal, which is the wrong test for output we may print to an injected stream.
 */
export function boxedTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, colour: boolean): string {
  const head = colour ? headers.map((cell) => BOLD_CYAN[0] + cell + BOLD_CYAN[1]) : [...headers];
  // cli-table3 (CommonJS) is loaded on the first table drawn: piped output never needs it.
  Table ??= createRequire(import.meta.url)("cli-table3") as typeof TableConstructor;
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push([...row]);
  return table.toString();
}
