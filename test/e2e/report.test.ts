import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatUsd } from "../../src/tasks/cost.js";
import { byId, externalReferences, numberOf, parsePage, tableRows, textOf, type ParsedPage } from "../helpers/html.js";
import { allowSmallTasks, oneTaskService } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, submitAs, submittedIds, WAITING, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();
/** A file name that is markup (a file name may hold anything but a slash). */
const RESULTS_NAME = `"><b>results<img src=x onerror=alert(1)> & co.csv`;

interface ValueCount {
  value: string;
  count: number;
}

async function smallTaskSandbox(): Promise<E2e> {
  const e = await sandbox({ minTaskSize: 1, noResultRate: 0.2 });
  await allowSmallTasks(e);
  return e;
}

/** A CRM export with mobiles, landlines, a Jersey number, and rows preparation leaves out (invalid, duplicate, blank). */
function crmCsv(): string {
  const numbers = [...gbList(60), "+44 20 7183 8750", "+44 131 496 0000", "+44 161 496 0000", "+44 1534 123456"];
  const rows = numbers.map((number, i) => `Customer ${i},${number}`);
  return ["name,phone", ...rows, "Broken,12", `Again,${numbers[0]}`, "Nobody,"].join("\n") + "\n";
}

const SECTIONS = ["The run", "Local preparation", "Money", "Results"];
/** A run's report with the ledger on also compares each result with the number's previous one. */
const RUN_SECTIONS = [...SECTIONS, "Changed since the previous check"];

/** The report's page, checked for what every report must be: parseable, self-contained, with its sections. */
function readReport(path: string, sections = SECTIONS): ParsedPage {
  const html = readFileSync(path, "utf8");
  const page = parsePage(html);
  expect(page.errors).toEqual([]);
  expect(externalReferences(page, html)).toEqual([]);
  expect(page.elements.filter((element) => element.tagName === "h2").map(textOf)).toEqual(sections);
  return page;
}

/** A chart's table (label, rows, share) as the --json summary's value counts. */
function counts(page: ParsedPage, id: string): ValueCount[] {
  return tableRows(page, id)
    .slice(1)
    .map(([value, n]) => ({ value: value === "(empty)" ? "" : value!, count: numberOf(n!) }));
}

function hasChart(page: ParsedPage, id: string): boolean {
  return byId(page, id)!.childNodes.some((node) => "tagName" in node && node.tagName === "svg");
}

function moneyOf(page: ParsedPage): Map<string, string> {
  return new Map(tableRows(page, "money-table").map(([label, value]) => [label!.replace(/ \(.*\)$/, ""), value!]));
}

describe("the HTML report", () => {
  it("of a carrier run written by submit --wait --report has each section and chart, with the download summary's numbers", async () => {
    const e = await smallTaskSandbox();
    const crm = e.file("crm.csv", crmCsv());
    const out = await e.run(submitAs(crm, "carrier_batch", "GB", ...WAITING, "-o", "results.csv", "--report", "report.html"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("Wrote the report to report.html.");
    expect(out.stdout).toBe("");
    const [id] = submittedIds(out.stderr);
    const summary = JSON.parse((await e.run(["download", id!, "--json", "-o", "again.csv"])).stdout) as Record<string, unknown>;
    const page = readReport(join(e.dir, "report.html"), RUN_SECTIONS);
    // The list's first run: no number has a previous result to differ from.
    expect(textOf(byId(page, "changed")!)).toContain(
      "None of these numbers had a previous result in the ledger, so none can have changed.",
    );
    expect(tableRows(page, "changes")).toHaveLength(1);

    expect(tableRows(page, "tasks")[1]!.slice(0, 3)).toEqual([id, "success", "GB"]);
    const facts = new Map(tableRows(page, "run-facts").map(([label, value]) => [label, value]));
    expect(facts.get("Product")).toBe("carrier_batch");
    expect(facts.get("List submitted")).toBe(crm);
    expect(facts.get("Results file")).toBe(join(e.dir, "results.csv"));

    // The run's preparation, as validate reads the same list.
    const prepared = JSON.parse((await e.run(["validate", crm, "--country", "GB", "--json"])).stdout) as Record<string, number>;
    const preparation = new Map(tableRows(page, "preparation-table").map(([label, n]) => [label, numberOf(n!)]));
    expect(preparation).toEqual(
      new Map([
        ["Rows read", prepared.rows_read],
        ["Kept (uploaded)", prepared.kept],
        ["Excluded: invalid", prepared.invalid_cnt],
        ["Excluded: no country code", prepared.no_code_cnt],
        ["Excluded: other country", prepared.other_country_cnt],
        ["Excluded: duplicate", prepared.duplicate_cnt],
        ["Excluded: blank", prepared.blank],
      ]),
    );
    expect([prepared.invalid_cnt, prepared.duplicate_cnt, prepared.blank]).toEqual([1, 1, 1]);

    const money = moneyOf(page);
    expect(money.get("Charged")).toBe(formatUsd(summary.charged_micros as number));
    expect(money.get("Refunded")).toBe(formatUsd(summary.refunded_micros as number));
    expect(money.get("Estimate before submitting")).toBe(formatUsd(prepared.kept! * 1000));
    expect(money.get("Reserved at submit")).toBe(formatUsd(prepared.kept! * 1000));

    for (const id of ["number-types-chart", "carriers-chart", "regions-chart"]) expect(hasChart(page, id)).toBe(true);
    expect(byId(page, "differences-chart")).toBeDefined();
    expect(counts(page, "carriers-table")).toEqual(summary.top_carriers);
    expect(counts(page, "number-types-table")).toEqual(summary.top_number_types);
    expect(counts(page, "regions-table")).toEqual(summary.top_regions);
    expect(summary.carrier_differences).toEqual({ rows: 0, top: [] });
    expect(tableRows(page, "differences-table")).toHaveLength(1);
  });

  it("of a signal run across two countries shows the activated share overall and per country, as the summary counts them", async () => {
    const e = await smallTaskSandbox();
    const ids: string[] = [];
    for (const [country, numbers] of [
      ["GB", gbList(50)],
      ["DE", Array.from({ length: 40 }, (_, i) => `+49 151 ${10_000_000 + i}`)],
    ] as const) {
      const out = await e.run(
        submitAs(e.file(`${country}.txt`, numbers.join("\n") + "\n"), "number_activity_batch", country, "--yes", "--quiet"),
      );
      expect(out.code, out.stderr).toBe(0);
      ids.push(out.stdout.trim());
    }
    expect((await e.run(["wait", ...ids, "--interval", "0.2", "--quiet"])).code).toBe(0);
    const report = await e.run(["report", ...ids, "-o", "report.html", "--json"]);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({ path: join(e.dir, "report.html"), tasks: 2 });
    const piped = await e.run(["report", ...ids]);
    expect(piped.code, piped.stderr).toBe(0);
    // Without -o the page goes to stdout (the sandbox's clock has not moved, so it is the same page).
    expect(piped.stdout).toBe(readFileSync(join(e.dir, "report.html"), "utf8"));
    const summary = JSON.parse((await e.run(["download", ...ids, "--json", "-o", "all.csv"])).stdout) as {
      activated: Record<string, number>;
      activated_by_country: Record<string, Record<string, number>>;
    };
    const page = readReport(join(e.dir, "report.html"));
    expect(hasChart(page, "activated-chart")).toBe(true);
    const table = tableRows(page, "activated-table");
    expect(table[0]).toEqual(["Country", "true", "false", "true share"]);
    const read = new Map(table.slice(1).map(([label, yes, no]) => [label, { true: numberOf(yes!), false: numberOf(no!), other: 0 }]));
    expect(read).toEqual(new Map([["All", summary.activated], ...Object.entries(summary.activated_by_country)]));
    expect([...read.keys()]).toEqual(["All", "DE", "GB"]);
    expect(
      tableRows(page, "tasks")
        .slice(1)
        .map((row) => row[0]),
    ).toEqual(ids);
    expect(new Map(tableRows(page, "run-facts").map(([label, value]) => [label, value])).get("Countries")).toBe("GB, DE");
  });

  it("writes hostile carrier names and file names as text, and shows carriers that differ from the underlying one", async () => {
    const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    const body = [
      "identifier,carrier,underlying_carrier,number_type,country_code,region,city",
      `447400100000,"${hostile.replaceAll('"', '""')}",Telefonica,mobile,GB,</td></tr></table><h1>x,`,
      "447400100001,giffgaff,Telefonica,mobile,GB,,",
      "447400100002,giffgaff,Telefonica,mobile,GB,,",
      "447400100003,Vodafone,Vodafone,mobile,GB,,",
    ].join("\n");
    const service = await oneTaskService({ body, contentType: "text/csv", task: { product: "carrier_batch", total: 4, success_cnt: 4 } });
    try {
      const e = await sandbox();
      const env = { BULKCHECK_BASE_URL: service.url };
      const out = await e.run(["download", service.id, "-o", RESULTS_NAME, "--report", "report.html", "--json"], { env });
      expect(out.code, out.stderr).toBe(0);
      const summary = JSON.parse(out.stdout) as Record<string, unknown>;
      const page = readReport(join(e.dir, "report.html"));
      expect(page.elements.filter((element) => ["script", "img", "b", "h1"].includes(element.tagName)).map((el) => el.tagName)).toEqual([
        "h1",
      ]);
      expect(counts(page, "carriers-table")).toEqual(summary.top_carriers);
      expect(counts(page, "carriers-table").map((row) => row.value)).toContain(hostile);
      expect(counts(page, "regions-table").map((row) => row.value)).toContain("</td></tr></table><h1>x");
      expect(new Map(tableRows(page, "run-facts").map(([label, value]) => [label, value])).get("Results file")).toBe(
        join(e.dir, RESULTS_NAME),
      );
      expect(summary.carrier_differences).toEqual({
        rows: 3,
        top: [
          { carrier: "giffgaff", underlying_carrier: "Telefonica", count: 2 },
          { carrier: hostile, underlying_carrier: "Telefonica", count: 1 },
        ],
      });
      expect(hasChart(page, "differences-chart")).toBe(true);
      expect(tableRows(page, "differences-table").slice(1)).toEqual([
        ["giffgaff", "Telefonica", "2"],
        [hostile, "Telefonica", "1"],
      ]);
      expect(textOf(byId(page, "preparation")!)).toContain("holds no preparation");
    } finally {
      await service.close();
    }
  });

  it("refuses --report without --wait, to stdout, or on the results file, before anything is uploaded", async () => {
    const e = await smallTaskSandbox();
    const list = e.file("list.txt", gbList(5).join("\n") + "\n");
    const submit = submitAs(list, "number_validation_batch", "GB", "--yes");
    for (const [argv, message] of [
      [[...submit, "--report", "r.html"], "--report needs --wait"],
      [[...submit, "--wait", "--report", "-"], "--report needs a file name"],
      [[...submit, "--wait", "-o", "r.html", "--report", "r.html"], "--report and -o name the same file."],
    ] as const) {
      const out = await e.run([...argv]);
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(message);
    }
    expect(e.state().tasks).toHaveLength(0);
  });
});
