import { BATCH_ROWS, batches } from "./batches.js";

/**
 * The JSON value of a field. `activated` is the spec's boolean, so its `true`/`false`
 * become JSON booleans; any other text there, and every other column (the identifier
 * included: digits with a country code are an id, not a number), stays a string as sent.
 */
export function jsonValue(column: string, value: string): string | boolean {
  if (column === "activated" && (value === "true" || value === "false")) return value === "true";
  return value;
}

/** Returns a function rendering a row as one JSON object keyed by the header's names. */
export function jsonObjectRenderer(header: readonly string[]): (row: readonly string[]) => string {
  const keys = header.map((name) => `${JSON.stringify(name)}:`);
  return (row) => `{${header.map((name, i) => keys[i] + JSON.stringify(jsonValue(name, row[i] ?? ""))).join(",")}}`;
}

/** Splits a table into its header and a renderer for its rows; an empty table has no rows. */
async function* jsonRows(table: AsyncIterable<readonly string[]>): AsyncGenerator<string[]> {
  let render: ((row: readonly string[]) => string) | undefined;
  for await (const batch of batches(table, BATCH_ROWS)) {
    const lines: string[] = [];
    for (const row of batch) {
      if (render) lines.push(render(row));
      else render = jsonObjectRenderer(row);
    }
    if (lines.length > 0) yield lines;
  }
}

/** JSON Lines: one object per data row, each on its own line. */
export async function* renderJsonLines(table: AsyncIterable<readonly string[]>): AsyncGenerator<string> {
  for await (const lines of jsonRows(table)) yield `${lines.join("\n")}\n`;
}

/** One JSON array of row objects, written as it streams: never held in memory whole. */
export async function* renderJsonArray(table: AsyncIterable<readonly string[]>): AsyncGenerator<string> {
  let separator = "\n";
  yield "[";
  for await (const lines of jsonRows(table)) {
    yield separator + lines.join(",\n");
    separator = ",\n";
  }
  yield "\n]\n";
}
