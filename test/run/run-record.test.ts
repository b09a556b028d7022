import { describe, expect, it } from "vitest";
import { runSummaries } from "../../src/run/history.js";
import { outputOf, planOf } from "../../src/run/run-record.js";
import { RunRecordError } from "../../src/store/health.js";
import { runSettings, runSummary } from "../../src/tasks/origins.js";
import { tempStores } from "../helpers/store.js";
import { LEASE, newRun } from "../store/store-contract.js";

const PLAN = {
  version: 1,
  list: "fingerprint",
  kept: 3,
  reused: 1,
  padded: 0,
  parts: [{ index: 0, count: 2, bytes: 26, sha256: "ab" }],
  limits: { minTaskSize: 1, maxTaskSize: 10_000, maxFileBytes: 20_971_520 },
  priceMicros: 3000,
  reservationMicros: 6000,
  savedMicros: 3000,
};

describe("a run's record, read back", () => {
  it("gives the plan and the output (stdout: no path) as bulkcheck wrote them, and nothing for a run that has none", () => {
    expect(planOf({ id: "r1", plan: PLAN })).toEqual(PLAN);
    expect(planOf({ id: "r1", plan: undefined })).toBeUndefined();
    expect(outputOf({ id: "r1", output: { path: "/data/out.csv", format: "csv" } })).toEqual({ path: "/data/out.csv" });
    expect(outputOf({ id: "r1", output: undefined })).toBeUndefined();
  });

  it("refuses a plan or an output it cannot read, naming the run, the field and what is wrong (exit 3)", () => {
    const refusal = (plan: unknown) => {
      try {
        planOf({ id: "r9", plan });
      } catch (error) {
        return error;
      }
      return undefined;
    };
    expect(refusal({ ...PLAN, version: 2 })).toMatchObject({
      kind: "input",
      message: "Run r9's plan in the store cannot be read: its version is 2, not 1.",
    });
    expect(refusal({ ...PLAN, kept: "3" })).toMatchObject({ message: expect.stringContaining("its kept is not a number") as unknown });
    expect(refusal({ ...PLAN, parts: 2 })).toMatchObject({ message: expect.stringContaining("its parts are not a list") as unknown });
    expect(refusal({ ...PLAN, limits: {} })).toMatchObject({ message: expect.stringContaining("its limits are not numbers") as unknown });
    expect(refusal("a plan")).toBeInstanceOf(RunRecordError);
    expect(outputOf({ id: "r9", output: { format: "csv" } })).toEqual({});
    expect(() => outputOf({ id: "r9", output: { path: 3 } })).toThrow("Run r9's output in the store cannot be read: its path is not text.");
    const chain = [
      { product: "carrier_batch", run: "r9" },
      { product: "number_activity_batch", run: "r10", condition: "number_activity_batch:number_type=mobile" },
    ];
    expect(outputOf({ id: "r9", output: { path: "/data/out.csv", chain } })).toEqual({ path: "/data/out.csv", chain });
    expect(() => outputOf({ id: "r9", output: { chain: ["carrier_batch"] } })).toThrow(
      "Run r9's output in the store cannot be read: its chain is not a list of products and runs.",
    );
    expect(() => outputOf({ id: "r9", output: "out.csv" })).toThrow("Run r9's output in the store cannot be read: it is not an object.");
  });
});

describe("how a run's list was read, and what preparation found, read back", () => {
  const SETTINGS = {
    version: 1,
    country: "GB",
    requireCountryCode: false,
    strictRegion: false,
    column: { index: 0, name: "phone" },
    hasHeader: true,
    encoding: "utf8",
    libphonenumber: { version: "1.12.0", metadata: "max" },
  };
  const SUMMARY = {
    rows_read: 3,
    submitted_lines: 3,
    kept: 2,
    invalid_cnt: 1,
    no_code_cnt: 0,
    other_country_cnt: 0,
    duplicate_cnt: 0,
    blank: 0,
  };
  const run = (fields: object) => ({ ...newRun({ id: "r9" }), ...fields });

  it("gives them as bulkcheck wrote them, and nothing for a run without them (or with settings of 0.1's journal, unversioned)", () => {
    expect(runSettings(run({ settings: SETTINGS }))).toEqual(SETTINGS);
    expect(runSettings(run({ settings: null }))).toBeUndefined();
    expect(runSettings(run({ settings: { column: { index: 0 } } }))).toBeUndefined();
    expect(runSettings(undefined)).toBeUndefined();
    expect(runSummary(run({ prepared: SUMMARY }))).toEqual(SUMMARY);
    expect(runSummary(run({ prepared: undefined }))).toBeUndefined();
  });

  it("refuses settings or a summary it cannot read, naming the run, the field and what is wrong (exit 3)", () => {
    expect(() => runSettings(run({ settings: { ...SETTINGS, version: 2 } }))).toThrow(
      "Run r9's settings in the store cannot be read: their version is 2, not 1.",
    );
    expect(() => runSettings(run({ settings: { ...SETTINGS, column: "phone" } }))).toThrow("their column is not a column index");
    expect(() => runSettings(run({ settings: { ...SETTINGS, hasHeader: "yes" } }))).toThrow("their hasHeader is not true or false");
    expect(() => runSettings(run({ settings: "GB" }))).toThrow(RunRecordError);
    expect(() => runSummary(run({ prepared: { ...SUMMARY, kept: "2" } }))).toThrow(
      "Run r9's preparation summary in the store cannot be read: its kept is not a count.",
    );
    expect(() => runSummary(run({ prepared: [] }))).toThrow(RunRecordError);
  });
});

describe("the list of runs", () => {
  const openStore = tempStores();

  it("shows a run whose plan cannot be read by its tasks, and says why", async () => {
    const store = openStore();
    await store.runs.create(newRun({ id: "r-good", identity: "a" }), LEASE);
    await store.runs.update("r-good", { plan: PLAN });
    await store.runs.create(newRun({ id: "r-bad", identity: "b" }), LEASE);
    await store.runs.update("r-bad", { plan: { list: "x", parts: 2 } });
    const summaries = await runSummaries(store, {}, {});
    expect(summaries.find((run) => run.id === "r-good")).toMatchObject({ kept: 3, reused: 1 });
    expect(summaries.find((run) => run.id === "r-bad")).toMatchObject({
      kept: 0,
      note: "Run r-bad's plan in the store cannot be read: its version is undefined, not 1.",
    });
  });
});
