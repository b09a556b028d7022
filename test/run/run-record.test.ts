import { describe, expect, it } from "vitest";
import { runSummaries } from "../../src/run/history.js";
import { outputOf, planOf, RunRecordError } from "../../src/run/run-record.js";
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
    expect(() => outputOf({ id: "r9", output: "out.csv" })).toThrow("Run r9's output in the store cannot be read: it is not an object.");
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
