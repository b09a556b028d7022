import { describe, expect, it } from "vitest";
import { RowCountMismatchError } from "../../src/results/errors.js";
import { count } from "../../src/format-count.js";
import { assertRowCounts, describeSummary } from "../../src/results/summary.js";
import { RowTally, topValues } from "../../src/results/tally.js";
import { writeResults } from "../../src/results/write-results.js";
import { collector, sourceOf } from "./helpers.js";

const CARRIER_CSV = [
  "identifier,carrier,underlying_carrier,number_type,country_code,region,city",
  "4915112345678,Telekom,Telekom,mobile,DE,,Berlin",
  "4915112345679,Vodafone,Vodafone,mobile,DE,,",
  "4930123456,Telekom,Telekom,fixed line,DE,Berlin,Berlin",
  "4915112345680,,,,DE,,",
  "4917612345681,congstar,Telekom,mobile,DE,Bayern,",
  "4917612345682,congstar,Telekom,mobile,DE,Bayern,",
  "4917612345683,,Telekom,mobile,DE,Berlin,",
].join("\n");

async function summarise(
  serviceType: "carrier_batch" | "number_activity_batch",
  sources: Parameters<typeof writeResults>[0],
  expectedRows?: number,
) {
  const out = collector();
  return writeResults(sources, { stream: out.stream, end: true }, { serviceType, expectedRows });
}

describe("result summary", () => {
  it("counts true and false for a signal product", async () => {
    const summary = await summarise("number_activity_batch", [
      sourceOf("4915112345678,true\n4915112345679,false\n4915112345680,true\n4915112345681,\n"),
    ]);
    expect(summary.rows).toBe(4);
    expect(summary.signal).toEqual({ true: 2, false: 1, other: 1 });
    expect(describeSummary(summary)).toEqual(["Wrote 4 rows (csv).", "activated: 2 true, 1 false, 1 other"]);
  });

  it("ranks carriers, number types and regions, and counts carriers that differ from the underlying one", async () => {
    const summary = await summarise("carrier_batch", [sourceOf(CARRIER_CSV)]);
    expect(summary.carrier).toEqual({
      topCarriers: [
        { value: "", count: 2 },
        { value: "Telekom", count: 2 },
        { value: "congstar", count: 2 },
        { value: "Vodafone", count: 1 },
      ],
      topNumberTypes: [
        { value: "mobile", count: 5 },
        { value: "", count: 1 },
        { value: "fixed line", count: 1 },
      ],
      topRegions: [
        { value: "", count: 3 },
        { value: "Bayern", count: 2 },
        { value: "Berlin", count: 2 },
      ],
      // An empty carrier is no name to compare: only congstar on Telekom's network counts.
      differences: { rows: 2, top: [{ carrier: "congstar", underlyingCarrier: "Telekom", count: 2 }] },
    });
    expect(describeSummary(summary)).toContain("Top carriers: (empty) 2, Telekom 2, congstar 2, Vodafone 1");
  });

  it("shows at most 40 characters of a value in a summary line, however long the service's", async () => {
    const long = "V".repeat(200_000);
    const summary = await summarise("carrier_batch", [sourceOf(`4915112345678,${long},Telekom,mobile,DE,Bayern,\n`)]);
    const line = describeSummary(summary).find((text) => text.startsWith("Top carriers: "));
    expect(line).toBe(`Top carriers: ${"V".repeat(39)}… 1`);
  });

  it("counts each source's true/false split beside the total", async () => {
    const summary = await summarise("number_activity_batch", [
      sourceOf("4915112345678,true\n4915112345679,false\n4915112345680,true\n"),
      sourceOf("identifier,activated\n4915112345681,false\n4915112345682,maybe\n"),
    ]);
    expect(summary.signal).toEqual({ true: 2, false: 2, other: 1 });
    expect(summary.sources.map((source) => source.signal)).toEqual([
      { true: 2, false: 1, other: 0 },
      { true: 0, false: 1, other: 1 },
    ]);
  });

  it("reports each source and the total whose row count differs from what was expected", async () => {
    const summary = await summarise(
      "number_activity_batch",
      [
        { open: sourceOf("4915112345678,true\n"), expectedRows: 1, label: "task-a" },
        { open: sourceOf("4915112345679,true\n"), expectedRows: 2, label: "task-b" },
      ],
      4,
    );
    expect(summary.mismatches).toEqual([
      { label: "task-b", expected: 2, actual: 1 },
      { label: "total", expected: 4, actual: 2 },
    ]);
    expect(describeSummary(summary).slice(-2)).toEqual([
      "Warning: The result of task-b has 1 rows; 2 were expected.",
      "Warning: The output has 2 rows; 4 were expected.",
    ]);
    expect(() => assertRowCounts(summary)).toThrow(RowCountMismatchError);
  });

  it("reports no mismatch when the counts agree", async () => {
    const summary = await summarise("number_activity_batch", [sourceOf("4915112345678,true\n")], 1);
    expect(summary.mismatches).toEqual([]);
    expect(() => assertRowCounts(summary)).not.toThrow();
  });

  it("describes what each source was", async () => {
    const summary = await summarise("number_activity_batch", [sourceOf("activated,identifier,x\ntrue,4915112345678,1\n")]);
    expect(summary.sources).toEqual([
      expect.objectContaining({ label: "result 1", container: "csv", hasHeader: true, extraColumns: ["x"], missingColumns: [], rows: 1 }),
    ]);
  });
});

describe("RowTally", () => {
  it("folds values past its distinct-value cap into one bucket instead of growing", () => {
    const tally = new RowTally("carrier_batch", 1);
    for (let i = 0; i < 10_005; i += 1) tally.add(["1", `carrier ${i}`, "", "mobile", "", `region ${i}`]);
    expect(tally.result().carrier?.topCarriers).toEqual([{ value: "(other values)", count: 5 }]);
    expect(tally.result().carrier?.topRegions).toEqual([{ value: "(other values)", count: 5 }]);
  });

  it("folds carrier pairs past the cap into one pair named as other values", () => {
    const tally = new RowTally("carrier_batch", 1);
    for (let i = 0; i < 10_003; i += 1) tally.add(["1", `brand ${i}`, "network"]);
    expect(tally.result().carrier?.differences).toEqual({
      rows: 10_003,
      top: [{ carrier: "(other values)", underlyingCarrier: "(other values)", count: 3 }],
    });
  });

  it("orders ties by value", () => {
    const counts = [
      { value: "b", count: 1 },
      { value: "a", count: 1 },
      { value: "c", count: 2 },
    ];
    expect(topValues(counts, 3).map((v) => v.value)).toEqual(["c", "a", "b"]);
  });
});

describe("count", () => {
  it.each([
    [0, "0"],
    [7, "7"],
    [999, "999"],
    [1000, "1,000"],
    [979968, "979,968"],
    [1234567, "1,234,567"],
    [1000000000, "1,000,000,000"],
  ])("writes %i as %s, as en-US grouping does", (n, text) => {
    expect(count(n)).toBe(text);
    expect(count(n)).toBe(n.toLocaleString("en-US"));
  });
});
