import { neutraliseFormula } from "../csv/write.js";
import { boxedTable, cellText, type TableColumn } from "../results/format-table.js";
import type { Printer } from "./printer.js";

/**
 * Prints rows as a boxed table that fits the terminal when stdout is one
 * (columns dropped or cells shortened with "…", never a wrapped row), and as
 * tab-separated lines (with a header line, every column) when it is piped, so
 * `cut` and `awk` work, and a spreadsheet opening them runs no formula the service sent.
 * Either way it is a table for people, which ends on a terminal sooner or later
 * (`bulkcheck status | grep …`): every cell is neutralised as the boxed table's are.
 */
export function printTable(printer: Printer, columns: ReadonlyArray<string | TableColumn>, rows: ReadonlyArray<readonly string[]>): void {
  if (!printer.io.stdout.isTTY) {
    printer.data(columns.map((column) => (typeof column === "string" ? column : column.header)).join("\t"));
    for (const row of rows) printer.data(row.map(tsvField).join("\t"));
    return;
  }
  // A terminal that reports no width (0) gets the default.
  printer.data(boxedTable(columns, rows, { colour: printer.options.colour, width: printer.io.stdout.columns || undefined }));
}

function tsvField(value: string): string {
  return neutraliseFormula(cellText(value));
}
