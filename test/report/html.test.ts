import { describe, expect, it } from "vitest";
import { renderReport } from "../../src/report/html.js";
import { reportModel, type ReportInput } from "../../src/report/model.js";
import { runFacts } from "../../src/report/run-facts.js";
import { emptySummary, type PrepareSummary } from "../../src/prepare/summary.js";
import type { TaskOrigin } from "../../src/tasks/origins.js";
import { DEFAULT_PRICE_MICROS } from "../../src/spec/products.js";
import type { CarrierCounts } from "../../src/results/tally.js";
import type { Task } from "../../src/spec/task.js";
import type { RunPlan } from "../../src/run/plan.js";
import type { RunRecord, RunSource, Scope } from "../../src/store/store.js";
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

function runRecord(fields: Partial<RunRecord>): RunRecord {
  return {
    id: "r1",
    scope: SCOPE,
    identity: "same-command",
    kind: "submit",
    state: "finished",
    startedAt: "2025-01-15T08:59:00.000Z",
    product: "carrier_batch",
    country: "GB",
    source: {},
    settings: {},
    ...fields,
  };
}

/** What the store knows of task a…a: `count` numbers uploaded by a run from `source`, whose list was prepared (and planned) so. */
function storedRun(count: number, source: RunSource, prepared?: PrepareSummary, plan?: RunPlan): ReportInput["runs"] {
  const taskId = "a".repeat(32);
  const origin: TaskOrigin = {
    taskId,
    task: { ref: 1, scope: SCOPE, runId: "r1", taskId, product: "carrier_batch", count },
    run: runRecord({ source, ...(prepared ? { prepared } : {}), ...(plan ? { plan } : {}) }),
  };
  return runFacts(new Map([[taskId, origin]]));
}

/** The plan of a run of `kept` numbers that reused `reused` results checked the day before and uploaded the rest, `padded` of them fresh ones checked again. */
function reusingPlan(kept: number, reused: number, padded: number): RunPlan {
  const uploaded = kept - reused;
  return {
    version: 1,
    list: "fingerprint",
    kept,
    reused,
    padded,
    reusedFrom: { oldest: "2025-01-14T08:00:00.000Z", newest: "2025-01-14T09:30:00.000Z" },
    parts: uploaded > 0 ? [{ index: 0, count: uploaded, bytes: 13 * uploaded, sha256: "s" }] : [],
    limits: { minTaskSize: 25, maxTaskSize: 1000, maxFileBytes: 1_000_000 },
    priceMicros: 3000,
    reservationMicros: uploaded * 3000,
    savedMicros: reused * 3000,
  };
}

const LEDGER_SOURCE = "the ledger (checked 2025-01-14T08:00:00.000Z)";

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
    expect(headings).toEqual(["The run", "Local preparation", "The output", "Money", "Results"]);
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
      ["Kept", 10],
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
      ["Charged (9 checked now)", "$0.009"],
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

  it("says where a run's rows came from: reused from the ledger (when, and what it saved), uploaded, padding, checked now", () => {
    const activity = { product: "number_activity_batch" } as const;
    const model = reportModel(
      input({
        ...activity,
        tasks: [task({ ...activity, total: 25, submitted_lines: 25, success_cnt: 13, failure_cnt: 12 })],
        results: {
          rows: 28,
          signal: { true: 15, false: 13, other: 0 },
          sources: [
            { label: `task ${"a".repeat(32)}`, rows: 13, signal: { true: 8, false: 5, other: 0 } },
            { label: LEDGER_SOURCE, rows: 15, signal: { true: 7, false: 8, other: 0 } },
          ],
        },
        runs: storedRun(25, {}, undefined, reusingPlan(40, 15, 5)),
      }),
    );
    const page = parsePage(renderReport(model));
    expect(page.errors).toEqual([]);
    expect(tableRows(page, "numbers-table")).toEqual([
      ["Kept from the list", "40"],
      ["Reused from the ledger, checked from 2025-01-14 08:00 UTC to 2025-01-14 09:30 UTC", "15"],
      ["Uploaded to the service", "25"],
      ["of which fresh results checked again, to fill a task to the service's minimum size", "5"],
      ["Checked now, with a result", "13"],
      ["Checked now, without a result", "12"],
      ["Rows in the output", "28"],
    ]);
    expect(tableRows(page, "money-table")).toEqual([
      ["Price per number", "$0.003"],
      ["Estimate before submitting", "$0.075"],
      ["Reserved at submit", "$0.075"],
      ["Of which padding (5 fresh results checked again to fill a task to the minimum size)", "$0.015"],
      ["Charged (13 checked now)", "$0.039"],
      ["Refunded (12 without result, and what the service did not check)", "$0.036"],
      ["Saved by reusing (15 numbers checked within --max-age, not checked again)", "$0.045"],
      ["Charged, compared with the estimate", "$0.036 less than estimated (52.0% of the estimate)"],
    ]);
    expect(tableRows(page, "activated-table")[1]).toEqual(["All", "15", "13", "53.6%"]);
    expect(textOf(byId(page, "results")!)).toContain("28 result rows: 15 from the ledger, 13 checked now.");
  });

  it("describes a run whose every number came from the ledger, which has no task", () => {
    const run = runRecord({ product: "number_activity_batch", plan: reusingPlan(28, 28, 0) });
    const model = reportModel(
      input({
        product: "number_activity_batch",
        tasks: [],
        results: { rows: 28, signal: { true: 15, false: 13, other: 0 }, sources: [{ label: LEDGER_SOURCE, rows: 28 }] },
        runs: runFacts(new Map(), [run]),
      }),
    );
    const page = parsePage(renderReport(model));
    expect(tableRows(page, "numbers-table").map(([label, n]) => [label!.replace(/, checked .*/, ""), numberOf(n!)])).toEqual([
      ["Kept from the list", 28],
      ["Reused from the ledger", 28],
      ["Uploaded to the service", 0],
      ["Checked now, with a result", 0],
      ["Checked now, without a result", 0],
      ["Rows in the output", 28],
    ]);
    const money = new Map(tableRows(page, "money-table").map(([label, usd]) => [label!.replace(/ \(.*/, ""), usd]));
    expect([money.get("Charged"), money.get("Saved by reusing")]).toEqual(["$0.00", "$0.084"]);
  });

  it("says how many reused numbers have no row in the output, and which list could not be read again", () => {
    const model = reportModel(
      input({
        product: "number_activity_batch",
        tasks: [task({ product: "number_activity_batch", total: 25, submitted_lines: 25, success_cnt: 25, failure_cnt: 0 })],
        results: { rows: 25, signal: { true: 25, false: 0, other: 0 }, sources: [{ label: `task ${"a".repeat(32)}`, rows: 25 }] },
        runs: storedRun(25, { path: "/lists/crm.csv" }, undefined, reusingPlan(40, 15, 0)),
        unreadLists: ["/lists/crm.csv"],
      }),
    );
    const page = parsePage(renderReport(model));
    expect(tableRows(page, "numbers-table")).toContainEqual(["Reused from the ledger, not in this output", "15"]);
    expect(textOf(byId(page, "output")!)).toContain(
      "15 numbers the run reused from the ledger have no row in this output, so the figures and charts leave them out. The list of the run is gone or has changed since: /lists/crm.csv.",
    );
  });

  it("splits the activated share by country with the ledger's rows as a line of their own, so the lines add up", () => {
    const activity = { product: "number_activity_batch" } as const;
    const html = renderReport(
      reportModel(
        input({
          ...activity,
          tasks: [task({ ...activity, country: "GB" }), task({ ...activity, id: "b".repeat(32), country: "DE" })],
          results: {
            rows: 14,
            signal: { true: 8, false: 6, other: 0 },
            sources: [
              { label: `task ${"a".repeat(32)}`, rows: 5, signal: { true: 4, false: 1, other: 0 } },
              { label: `task ${"b".repeat(32)}`, rows: 5, signal: { true: 2, false: 3, other: 0 } },
              { label: LEDGER_SOURCE, rows: 4, signal: { true: 2, false: 2, other: 0 } },
            ],
          },
        }),
      ),
    );
    expect(tableRows(parsePage(html), "activated-table")).toEqual([
      ["Country", "true", "false", "true share"],
      ["All", "8", "6", "57.1%"],
      ["DE", "2", "3", "40.0%"],
      ["GB", "4", "1", "80.0%"],
      ["Reused from the ledger", "2", "2", "50.0%"],
    ]);
  });

  it("says so when the store knows nothing of the tasks' preparation", () => {
    const page = parsePage(renderReport(reportModel(input({}))));
    expect(textOf(byId(page, "preparation")!)).toContain("holds no preparation for these tasks");
    expect(tableRows(page, "money-table").map(([label]) => label)).not.toContain("Estimate before submitting");
  });
});
