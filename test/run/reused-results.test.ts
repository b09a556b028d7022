import { describe, expect, it } from "vitest";
import { csvText } from "../../src/csv/write.js";
import { IdentifierSet } from "../../src/spec/identifier-set.js";
import { reusedSources } from "../../src/run/reused-results.js";
import type { Scope } from "../../src/store/store.js";
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
});
