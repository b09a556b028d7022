import { describe, expect, it } from "vitest";
import { renderReport } from "../../src/report/html.js";
import { reportModel, type ReportInput } from "../../src/report/model.js";
import { runFacts } from "../../src/report/run-facts.js";
import { emptySummary, type PrepareSummary } from "../../src/prepare/summary.js";
import type { TaskOrigin } from "../../src/run/origins.js";
import { DEFAULT_PRICE_MICROS } from "../../src/spec/products.js";
import type { CarrierCounts } from "../../src/results/tally.js";
import type { Task } from "../../src/spec/task.js";
import type { RunSource, Scope } from "../../src/store/store.js";
import { byId, externalReferences, numberOf, parsePage, tableRows, textOf } from "../helpers/html.js";

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)> & "quoted" 'single'`;

function task(fields: Partial<Task>): Task {
  return {
    id: "a".repeat(32),
    product: "carrier_batch",
    status: "success",
    country: "GB",
    total: 10,
    submitted_lines: 12,
    success_cnt: 9,
    failure_cnt: 1,
    created_at: "2025-01-15T09:00:00.000Z",
    ...fields,
  };
}

const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };

/** What the store knows of task a…a: `count` numbers uploaded by a run from `source`, whose list was prepared so. */
function storedRun(count: number, source: RunSource, prepared?: PrepareSummary): ReportInput["runs"] {
  const taskId = "a".repeat(32);
  const origin: TaskOrigin = {
    taskId,
    task: { ref: 1, scope: SCOPE, runId: "r1", taskId, product: "carrier_batch", count },
    run: {
      id: "r1",
      scope: SCOPE,
      identity: "same-command",
      kind: "submit",
      state: "finished",
      startedAt: "2025-01-15T08:59:00.000Z",
      product: "carrier_batch",
      country: "GB",
      source,
      settings: {},
      ...(prepared ? { prepared } : {}),
    },
  };
  return runFacts(new Map([[taskId, origin]]));
}

function input(fields: Partial<ReportInput>): ReportInput {
  return {
    product: "carrier_batch",
    tasks: [task({})],
    results: { rows: 0, sources: [] },
    prices: DEFAULT_PRICE_MICROS,
    runs: runFacts(new Map()),
    generatedAt: "2025-01-15T10:00:00.000Z",
    ...fields,
  };
}

/** The input of a carrier run of 9 rows with these counts. */
function carrierRun(carrier: CarrierCounts, fields: Partial<ReportInput> = {}): ReportInput {
  return input({ results: { rows: 9, sources: [{ label: `task ${"a".repeat(32)}`, rows: 9 }], carrier }, ...fields });
}

describe("the HTML report", () => {
  it("escapes carrier names and file paths, and references nothing outside itself", () => {
    const html = renderReport(
      reportModel(
        carrierRun(
          {
            topCarriers: [{ value: HOSTILE, count: 9 }],
            topNumberTypes: [{ value: "mobile", count: 9 }],
            topRegions: [{ value: "</table><h1>region", count: 9 }],
            differences: { rows: 9, top: [{ carrier: HOSTILE, underlyingCarrier: "<b>net</b>", count: 9 }] },
          },
          { runs: storedRun(12, { path: `/lists/${HOSTILE}.csv` }), resultsPath: "/out/<i>r</i>.xlsx" },
        ),
      ),
    );
    const page = parsePage(html);
    expect(page.errors).toEqual([]);
    expect(externalReferences(page, html)).toEqual([]);
    expect(page.elements.filter((element) => ["img", "b", "i"].includes(element.tagName))).toEqual([]);
    expect(tableRows(page, "carriers-table")[1]![0]).toBe(HOSTILE);
    expect(tableRows(page, "regions-table")[1]![0]).toBe("</table><h1>region");
    expect(tableRows(page, "differences-table")[1]!.slice(0, 2)).toEqual([HOSTILE, "<b>net</b>"]);
    const facts = tableRows(page, "run-facts");
    expect(facts).toContainEqual(["List submitted", `/lists/${HOSTILE}.csv`]);
    expect(facts).toContainEqual(["Results file", "/out/<i>r</i>.xlsx"]);
    // The chart draws the name too, cut short, as text.
    expect(textOf(byId(page, "carriers-chart")!)).toContain("<script>alert(");
  });

  it("has each section, and a chart with its table for every carrier figure", () => {
    const html = renderReport(
      reportModel(
        carrierRun(
          {
            topCarriers: [
              { value: "Vodafone", count: 6 },
              { value: "", count: 3 },
            ],
            topNumberTypes: [{ value: "mobile", count: 9 }],
            topRegions: [{ value: "", count: 9 }],
            differences: { rows: 0, top: [] },
          },
          {
            runs: storedRun(10, {}, { ...emptySummary(), rows_read: 14, kept: 10, invalid_cnt: 3, blank: 1 }),
          },
        ),
      ),
    );
    const page = parsePage(html);
    const headings = page.elements.filter((element) => element.tagName === "h2").map(textOf);
    expect(headings).toEqual(["The run", "Local preparation", "Money", "Results"]);
    for (const id of ["number-types", "carriers", "regions"]) {
      const figure = byId(page, `${id}-chart`)!;
      expect(figure.childNodes.some((node) => "tagName" in node && node.tagName === "svg")).toBe(true);
      expect(byId(page, `${id}-table`)).toBeDefined();
    }
    expect(tableRows(page, "carriers-table").slice(1)).toEqual([
      ["Vodafone", "6", "66.7%"],
      ["(empty)", "3", "33.3%"],
    ]);
    expect(tableRows(page, "preparation-table").map(([label, n]) => [label, numberOf(n!)])).toEqual([
      ["Rows read", 14],
      ["Kept (uploaded)", 10],
      ["Excluded: invalid", 3],
      ["Excluded: no country code", 0],
      ["Excluded: other country", 0],
      ["Excluded: duplicate", 0],
      ["Excluded: blank", 1],
    ]);
    // Reserved: 12 lines at $0.001; charged 9; refunded the other 3; the estimate was 10 numbers.
    expect(tableRows(page, "money-table")).toEqual([
      ["Price per number", "$0.001"],
      ["Estimate before submitting", "$0.01"],
      ["Reserved at submit", "$0.012"],
      ["Charged (9 checked)", "$0.009"],
      ["Refunded (1 without result, and what the service did not check)", "$0.003"],
      // Said in words a reader takes in at once (it was "-$0.001 (90.0% of it)").
      ["Charged, compared with the estimate", "$0.001 less than estimated (90.0% of the estimate)"],
    ]);
  });

  it("shows the activated share per country when the tasks span several", () => {
    const html = renderReport(
      reportModel(
        input({
          product: "number_activity_batch",
          tasks: [
            task({ product: "number_activity_batch", country: "GB" }),
            task({ id: "b".repeat(32), product: "number_activity_batch", country: "DE" }),
          ],
          results: {
            rows: 10,
            signal: { true: 6, false: 3, other: 1 },
            sources: [
              { label: `task ${"a".repeat(32)}`, rows: 5, signal: { true: 4, false: 1, other: 0 } },
              { label: `task ${"b".repeat(32)}`, rows: 5, signal: { true: 2, false: 2, other: 1 } },
            ],
          },
        }),
      ),
    );
    const page = parsePage(html);
    expect(page.errors).toEqual([]);
    expect(byId(page, "activated-chart")).toBeDefined();
    expect(tableRows(page, "activated-table")).toEqual([
      ["Country", "true", "false", "other", "true share"],
      ["All", "6", "3", "1", "60.0%"],
      ["DE", "2", "2", "1", "40.0%"],
      ["GB", "4", "1", "0", "80.0%"],
    ]);
  });

  it("says so when the store knows nothing of the tasks' preparation", () => {
    const page = parsePage(renderReport(reportModel(input({}))));
    expect(textOf(byId(page, "preparation")!)).toContain("holds no preparation for these tasks");
    expect(tableRows(page, "money-table").map(([label]) => label)).not.toContain("Estimate before submitting");
  });
});
