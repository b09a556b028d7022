import { describe, expect, it } from "vitest";
import { csvText } from "../../src/csv/write.js";
import { IdentifierSet } from "../../src/spec/identifier-set.js";
import { reusedSources } from "../../src/run/reused-results.js";
import type { Scope, Store } from "../../src/store/store.js";
import { tempStores } from "../helpers/store.js";
import { recordRows } from "../helpers/ledger-rows.js";

const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };
const openStore = tempStores();
const COLUMNS = ["carrier", "underlying_carrier", "number_type", "country_code", "region", "city"];

describe("the ledger's reused results as a run's output reads them", () => {
  it("are the rows the run takes from each task, as a CSV result file quoted as csv-stringify quotes it, formula-like cells as stored", async () => {
    const store = openStore();
    const task = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", taskId: "a".repeat(32) });
    await store.tasks.update(task.ref, { status: "success", checkedAt: "2026-11-26T00:00:00.000Z" });
    const rows = [
      { identifier: "447400000001", values: ["Vodafone, UK", 'EE "Ltd"', "mobile", "GB", "", "Leeds\nWest"] },
      { identifier: "447400000002", values: ["=cmd", "", "mobile", "GB", "England", "London"] },
      { identifier: "447400000003", values: ["O2", "", "fixed_line", "GB", "", ""] },
    ];
    await recordRows(store.ledger, task.ref, COLUMNS, rows, "2026-11-26T00:00:00.000Z");
    // The run takes the first two numbers from this task (the third is checked again).
    const reused = new IdentifierSet();
    reused.firstLineOf(447400000001, task.ref);
    reused.firstLineOf(447400000002, task.ref);
    const [source] = reusedSources(store, reused, new Map([[task.ref, "2026-11-26T00:00:00.000Z"]]));
    let text = "";
    for await (const chunk of await source!.open()) text += String(chunk);
    const expected = [["identifier", ...COLUMNS], ...rows.slice(0, 2).map((row) => [row.identifier, ...row.values])];
    expect(text).toBe(csvText(expected, { verbatim: true }));
  });

  it("keeps and leaves out whole rows around values that hold line breaks and quotes", async () => {
    const store = openStore();
    const task = await finishedTask(store, "b");
    const rows = Array.from({ length: 9 }, (_, i) => ({
      identifier: String(447400000010 + i),
      values: [i % 3 === 0 ? `Line ${i}\nand "more"\r\n` : `Carrier ${i}`, "", "mobile", "GB", i % 2 ? "a,b" : "", ""],
    }));
    await recordRows(store.ledger, task.ref, COLUMNS, rows, "2026-11-26T00:00:00.000Z");
    const taken = rows.filter((_, i) => i !== 0 && i !== 4 && i !== 6);
    expect(await readReused(store, task.ref, taken)).toBe(csvText(table(COLUMNS, taken), { verbatim: true }));
  });

  it("are read row by row when a task keeps a column of the service's own (in `extra`), to the same CSV", async () => {
    const store = openStore();
    const task = await finishedTask(store, "c");
    const columns = ["carrier", "ported"];
    const rows = [
      { identifier: "447400000021", values: ["EE", "yes, once"] },
      { identifier: "447400000022", values: ["O2", "no"] },
    ];
    await recordRows(store.ledger, task.ref, columns, rows, "2026-11-26T00:00:00.000Z");
    expect(await store.ledger.csvOfTask(task.ref)).toBeUndefined();
    expect(await readReused(store, task.ref, rows.slice(1))).toBe(csvText(table(columns, rows.slice(1)), { verbatim: true }));
  });
});

async function finishedTask(store: Store, letter: string) {
  const task = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", taskId: letter.repeat(32) });
  await store.tasks.update(task.ref, { status: "success", checkedAt: "2026-11-26T00:00:00.000Z" });
  return task;
}

/** The CSV a run reads for the rows `taken` from the ledger task `ref`. */
async function readReused(store: Store, ref: number, taken: ReadonlyArray<{ identifier: string }>): Promise<string> {
  const reused = new IdentifierSet();
  for (const row of taken) reused.firstLineOf(Number(row.identifier), ref);
  const [source] = reusedSources(store, reused, new Map([[ref, "2026-11-26T00:00:00.000Z"]]));
  let text = "";
  for await (const chunk of await source!.open()) text += String(chunk);
  return text;
}

function table(columns: readonly string[], rows: ReadonlyArray<{ identifier: string; values: readonly string[] }>): string[][] {
  return [["identifier", ...columns], ...rows.map((row) => [row.identifier, ...row.values])];
}
