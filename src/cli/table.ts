import Table from "cli-table3";
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
  printer.data(renderBoxed(headers, rows, printer.options.colour));
}

/** A boxed table as a string; cli-table3 colours its header and borders unless told not to. */
export function renderBoxed(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, colour: boolean): string {
  const table = new Table({
    head: [...headers],
    style: colour ? { head: ["cyan"], border: ["grey"] } : { head: [], border: [] },
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}

function tsvField(value: string): string {
  return value.replace(/[\t\r\n]/g, " ");
}
