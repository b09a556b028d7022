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

/** A ledger task's rows (those `keep` takes) as a CSV result file: the header, then the rows, as stored. */
async function* csvOf(store: Store, ref: number, keep: (identifier: number) => boolean): AsyncGenerator<string> {
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
