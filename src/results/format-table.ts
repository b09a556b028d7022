import Table from "cli-table3";

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
  const style = options.colour ? { head: ["bold"] } : { head: [], border: [] };
  const rendered = new Table({ head: header ?? [], style });
  rendered.push(...shown);
  yield `${rendered.toString()}\n`;
}
