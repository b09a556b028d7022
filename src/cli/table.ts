import { boxedTable } from "../results/format-table.js";
import type { Printer } from "./printer.js";

/**
 * Prints rows as a boxed table when stdout is a terminal, and as tab-separated
 * lines (with a header line) when it is piped, so `cut` and `awk` work.
 */
export function printTable(printer: Printer, headers: readonly string[], rows: ReadonlyArray<readonly string[]>): void {
  if (!printer.io.stdout.isTTY) {
    printer.data(headers.join("\t"));
    for (const row of rows) printer.data(row.map(tsvField).join("\t"));
    return;
  }
  printer.data(boxedTable(headers, rows, printer.options.colour));
}

function tsvField(value: string): string {
  return value.replace(/[\t\r\n]/g, " ");
}
