import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICE_MICROS } from "../../src/spec/products.js";
import { formatUsd } from "../../src/tasks/cost.js";
import { byId, externalReferences, numberOf, parsePage, tableRows, textOf, type ParsedPage } from "../helpers/html.js";
import { allowSmallTasks, oneTaskService } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, lines, submitAs, submittedIds, WAITING, type E2e } from "../helpers/sandbox.js";

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

const SECTIONS = ["The run", "Local preparation", "The output", "Money", "Results"];
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
        ["Kept", prepared.kept],
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

describe("the report of a run that reused results from the ledger", () => {
  const PRICE = DEFAULT_PRICE_MICROS.number_activity_batch;
  const activity = (file: string, ...extra: string[]) => submitAs(file, "number_activity_batch", "GB", ...WAITING, ...extra);

  /** An output's rows (identifier, activated, checked_at); its values need no unquoting. */
  function outputRows(e: E2e, name: string): Array<{ identifier: string; activated: string; checkedAt: string }> {
    return lines(readFileSync(join(e.dir, name), "utf8"))
      .slice(1)
      .map((line) => {
        const [identifier, activated, checkedAt] = line.split(",");
        return { identifier: identifier!, activated: activated!, checkedAt: checkedAt! };
      });
  }

  /** The lines of "The output", by label without the dates of the reused results. */
  function numbersOf(page: ParsedPage): Map<string, number> {
    return new Map(tableRows(page, "numbers-table").map(([label, n]) => [label!.replace(/, checked .*$/, ""), numberOf(n!)]));
  }

  /** The `All` line of the activated table: [true, false]. */
  function activatedOf(page: ParsedPage): number[] {
    const all = tableRows(page, "activated-table").find(([label]) => label === "All")!;
    return [numberOf(all[1]!), numberOf(all[2]!)];
  }

  /**
   * The list's first run (30 numbers, a fifth without result), then 10 numbers more with a
   * minimum task of 25: the second run reuses the first's results, does not upload again
   * those the service answered without a result, uploads the new numbers, and fills its task
   * with the oldest fresh results.
   */
  async function secondRun() {
    const e = await sandbox({ minTaskSize: 1, noResultRate: 0.2, fakeClock: false });
    expect((await e.bin(["config", "set", "min-task-size", "25"])).code).toBe(0);
    const first = await e.bin(activity(e.file("first.txt", gbList(30).join("\n") + "\n"), "-o", "first.csv"));
    expect(first.code, first.stderr).toBe(0);
    const list = e.file("list.txt", gbList(40).join("\n") + "\n");
    const second = await e.bin(activity(list, "-o", "out.csv", "--report", "r.html"));
    expect(second.code, second.stderr).toBe(0);
    return { e, list, taskIds: submittedIds(second.stderr), stderr: second.stderr };
  }

  it("counts every row of the output, reused or checked now, and says what reusing saved", async () => {
    const { e, taskIds, stderr } = await secondRun();
    const before = new Map(outputRows(e, "first.csv").map((row) => [row.identifier, row.checkedAt]));
    const out = outputRows(e, "out.csv");
    // A reused row carries the date of the first run's check; a row checked now, a date of its own.
    const reused = out.filter((row) => before.get(row.identifier) === row.checkedAt).length;
    const checkedNow = out.length - reused;
    const checkedAgain = out.filter((row) => before.has(row.identifier) && before.get(row.identifier) !== row.checkedAt).length;
    const uploaded = e.state().tasks.find((task) => task.id === taskIds[0])!.total;
    const noResultBefore = 30 - before.size;
    expect(noResultBefore).toBeGreaterThan(0);
    expect([checkedAgain, uploaded, reused + checkedAgain]).toEqual([15, 25, before.size]);
    // The summary on the terminal tells them apart too: only the rows checked now were charged.
    expect(stderr).toContain(
      `Checked now ${checkedNow}, reused from the ledger ${reused}, no result ${uploaded - checkedNow}. Charged ${formatUsd(checkedNow * PRICE)};`,
    );

    const page = readReport(join(e.dir, "r.html"), RUN_SECTIONS);
    expect(numbersOf(page)).toEqual(
      new Map([
        ["Kept from the list", 40],
        ["Reused from the ledger", reused],
        ["Checked before without a result (within --max-age), not checked again", noResultBefore],
        ["Uploaded to the service", uploaded],
        ["of which fresh results checked again, to fill a task to the service's minimum size", checkedAgain],
        ["Checked now, with a result", checkedNow],
        ["Checked now, without a result", uploaded - checkedNow],
        ["Rows in the output", out.length],
      ]),
    );
    const firstChecked = [...before.values()][0]!;
    expect(tableRows(page, "numbers-table")[1]![0]).toBe(
      `Reused from the ledger, checked at ${firstChecked.slice(0, 10)} ${firstChecked.slice(11, 16)} UTC`,
    );
    const money = moneyOf(page);
    expect(money.get("Charged")).toBe(formatUsd(checkedNow * PRICE));
    expect(money.get("Refunded")).toBe(formatUsd((uploaded - checkedNow) * PRICE));
    expect(money.get("Saved by reusing")).toBe(formatUsd((reused + noResultBefore) * PRICE));
    expect(tableRows(page, "money-table").find(([label]) => label!.startsWith("Saved by reusing"))![0]).toBe(
      `Saved by reusing (${reused + noResultBefore} numbers checked within --max-age, not checked again)`,
    );
    expect(money.get("Of which padding")).toBe(formatUsd(checkedAgain * PRICE));
    expect(activatedOf(page)).toEqual([
      out.filter((row) => row.activated === "true").length,
      out.filter((row) => row.activated === "false").length,
    ]);
    expect(textOf(byId(page, "results")!)).toContain(`${out.length} result rows: ${reused} from the ledger, ${checkedNow} checked now.`);

    // `bulkcheck report` of the run's task says the same of the run.
    expect((await e.bin(["report", ...taskIds, "-o", "again.html"])).code).toBe(0);
    const again = readReport(join(e.dir, "again.html"));
    for (const id of ["numbers-table", "money-table", "activated-table"]) expect(tableRows(again, id)).toEqual(tableRows(page, id));
  });

  it("says which reused numbers it leaves out when the run's list has changed since", async () => {
    const { e, list, taskIds } = await secondRun();
    const reused = numbersOf(readReport(join(e.dir, "r.html"), RUN_SECTIONS)).get("Reused from the ledger")!;
    writeFileSync(list, gbList(41).join("\n") + "\n");
    expect((await e.bin(["report", ...taskIds, "-o", "changed.html"])).code).toBe(0);
    const page = readReport(join(e.dir, "changed.html"));
    const numbers = numbersOf(page);
    expect(numbers.get("Reused from the ledger, not in this output")).toBe(reused);
    expect(numbers.get("Rows in the output")).toBe(numbers.get("Checked now, with a result"));
    expect(textOf(byId(page, "output")!)).toContain(
      `${reused} numbers the run reused from the ledger have no row in this output, so the figures and charts leave them out. The list of the run is gone or has changed since: ${list}.`,
    );
  });

  it("of a run whose every number has a fresh result describes the output, though the run has no task", async () => {
    const { e } = await secondRun();
    const checked = outputRows(e, "out.csv");
    const fresh = e.file("fresh.txt", checked.map((row) => `+${row.identifier}`).join("\n") + "\n");
    const run = await e.bin(activity(fresh, "-o", "fresh.csv", "--report", "fresh.html"));
    expect(run.code, run.stderr).toBe(0);
    expect(submittedIds(run.stderr)).toEqual([]);
    const out = outputRows(e, "fresh.csv");
    const page = readReport(join(e.dir, "fresh.html"), RUN_SECTIONS);
    expect(numbersOf(page)).toEqual(
      new Map([
        ["Kept from the list", checked.length],
        ["Reused from the ledger", out.length],
        ["Uploaded to the service", 0],
        ["Checked now, with a result", 0],
        ["Checked now, without a result", 0],
        ["Rows in the output", out.length],
      ]),
    );
    expect(moneyOf(page).get("Saved by reusing")).toBe(formatUsd(out.length * PRICE));
    expect(activatedOf(page)).toEqual([
      out.filter((row) => row.activated === "true").length,
      out.filter((row) => row.activated === "false").length,
    ]);
  });

  it("of a run that took another run's task in flight adds up to the list: rows from it, and its numbers without a result", async () => {
    const e = await smallTaskSandbox();
    const list = e.file("list.txt", gbList(40).join("\n") + "\n");
    const first = await e.run(submitAs(list, "number_activity_batch", "GB", "--yes"));
    expect(first.code, first.stderr).toBe(0);
    const taken = await e.run(activity(list, "-o", "out.csv", "--report", "r.html"));
    expect(taken.code, taken.stderr).toBe(0);
    const out = outputRows(e, "out.csv");
    const withoutResult = e.state().tasks[0]!.failure_cnt!;
    expect(withoutResult).toBeGreaterThan(0);
    expect(numbersOf(readReport(join(e.dir, "r.html"), RUN_SECTIONS))).toEqual(
      new Map([
        ["Kept from the list", 40],
        ["Reused from the ledger", out.length],
        ["of which taken from tasks of other runs, in flight when this run was planned", out.length],
        ["Taken from tasks of other runs in flight, answered there without a result", withoutResult],
        ["Uploaded to the service", 0],
        ["Checked now, with a result", 0],
        ["Checked now, without a result", 0],
        ["Rows in the output", out.length],
      ]),
    );
  });
});
