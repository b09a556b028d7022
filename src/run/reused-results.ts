import { Readable } from "node:stream";
import { delimitedLine } from "../csv/write.js";
import type { IdentifierSet } from "../spec/identifier-set.js";
import type { ResultSource } from "../results/read-results.js";
import type { Store } from "../store/store.js";

/**
 * The results a run takes from the ledger instead of checking its numbers again: one
 * source per ledger task they come from, read as a result file would be (so they go
 * through the same rules and formats), each dated by when that task was checked.
 */
export function reusedSources(store: Store, reused: IdentifierSet, tasks: ReadonlyMap<number, string>): ResultSource[] {
  return [...tasks].map(([ref, checkedAt]) => ({
    label: `the ledger (checked ${checkedAt})`,
    checkedAt,
    open: () => Promise.resolve(Readable.from(csvOf(store, ref, (identifier) => reused.get(identifier) === ref))),
  }));
}

/**
 * A ledger task's rows (those `keep` takes) as a CSV result file: the header, then the rows,
 * as stored. The database writes the lines where it can (csvOfTask); otherwise they are made
 * here from the rows.
 */
async function* csvOf(store: Store, ref: number, keep: (identifier: number) => boolean): AsyncGenerator<string> {
  const csv = await store.ledger.csvOfTask(ref);
  if (csv) {
    yield csv.header;
    for await (const piece of csv.lines) {
      const kept = keptLines(piece, keep);
      if (kept !== "") yield kept;
    }
    return;
  }
  let columns: string[] | undefined;
  for await (const batch of store.ledger.ofTask(ref)) {
    // Line by line, as the download writes its rows: csv-stringify's set-up per call cost more than the rows.
    let text = "";
    for (const row of batch) {
      if (!keep(Number(row.identifier))) continue;
      if (columns === undefined) {
        columns = Object.keys(row.values);
        text += delimitedLine(["identifier", ...columns], ",", true);
      }
      // As stored, which is as the service sent it: the output neutralises it like any result.
      text += delimitedLine([row.identifier, ...columns.map((column) => row.values[column] ?? "")], ",", true);
    }
    if (text !== "") yield text;
  }
}

/**
 * The lines of `piece` that `keep` takes: each starts with its number's digits and a comma and
 * ends with "\n" (a quoted value may hold a line break: a line goes on while its quotes are open).
 */
function keptLines(piece: string, keep: (identifier: number) => boolean): string {
  // Runs of kept lines are sliced out whole: a string built line by line cost ten times the scan.
  let kept = "";
  let run = 0;
  let quote = nextQuote(piece, 0);
  for (let start = 0; start < piece.length;) {
    let end = piece.indexOf("\n", start) + 1;
    let open = false;
    while (quote < end) {
      open = !open;
      quote = nextQuote(piece, quote + 1);
      if (open && quote >= end) end = piece.indexOf("\n", end) + 1 || piece.length;
    }
    if (!keep(Number(piece.slice(start, piece.indexOf(",", start))))) {
      kept += piece.slice(run, start);
      run = end;
    }
    start = end;
  }
  return run === 0 ? piece : kept + piece.slice(run);
}

/** Where the next quote is from `from` on; Infinity when there is none (a sentinel that kept the scan as fast as one without quotes). */
function nextQuote(text: string, from: number): number {
  const at = text.indexOf('"', from);
  return at === -1 ? Infinity : at;
}
