import { describe, expect, it } from "vitest";
import { allowSmallTasks } from "../helpers/results-fixtures.js";
import { e2eSandboxes, identifier, gbList, lines, listText, submitAs, WAITING, type E2e } from "../helpers/sandbox.js";

/** Issue 30: `--query` picks what to print out of every `--json` output, in-process (JMESPath). */
const sandbox = e2eSandboxes();
const CARRIER = "carrier_batch";

/** A sandbox whose tasks hold at most 10 numbers, and a finished run of `numbers` numbers split into tasks of 10. */
async function withRun(numbers: number): Promise<{ e: E2e; list: string }> {
  const e = await sandbox({ minTaskSize: 1 });
  await allowSmallTasks(e, 10);
  const list = e.file("list.txt", listText(numbers));
  const run = await e.run([...submitAs(list, CARRIER, "GB", ...WAITING), "-o", "out.csv"]);
  expect(run.code, run.stderr).toBe(0);
  return { e, list };
}

describe("--query on one JSON object", () => {
  it("prints the figure asked for from runs, and the task ids of a run as one line for wait or download", async () => {
    const { e } = await withRun(25);
    const charged = await e.run(["runs", "--json", "--query", "totals.charged_micros"]);
    expect(charged).toMatchObject({ code: 0, stdout: "25000\n" });
    const run = (await e.run(["runs", "--json", "--query", "runs[0].id"])).stdout.trim();
    const ids = await e.run(["runs", "show", run, "--json", "--query", "join(' ', tasks[].task_id)"]);
    expect(ids.code, ids.stderr).toBe(0);
    expect(ids.stdout.trim().split(" ").sort()).toEqual(
      e
        .state()
        .tasks.map((task) => task.id)
        .sort(),
    );
    // The line is what wait takes as one argument.
    expect((await e.run(["wait", ids.stdout.trim(), "--quiet"])).code).toBe(0);
  });

  it("prints JSON for what is not a string, and nothing for a field the object does not have", async () => {
    const { e } = await withRun(5);
    expect((await e.run(["runs", "--json", "--query", "totals.{runs: runs, kept: kept}"])).stdout).toBe('{"runs":1,"kept":5}\n');
    expect(await e.run(["balance", "--json", "--query", "no_such_field"])).toMatchObject({ code: 0, stdout: "" });
  });

  it("works from the built binary, which loads the query library only then", async () => {
    const e = await sandbox();
    const out = await e.bin(["balance", "--json", "--query", "balance_micros"]);
    expect(out).toMatchObject({ code: 0, stdout: "10000000\n" });
  });
});

describe("--query on one JSON object per line", () => {
  it("selects from each task a submit prints, and the run's summary, which has no id, prints nothing", async () => {
    const e = await sandbox({ minTaskSize: 1 });
    await allowSmallTasks(e, 10);
    const out = await e.run([...submitAs(e.file("list.txt", listText(25)), CARRIER, "GB", "--yes"), "--json", "--query", "id"]);
    expect(out.code, out.stderr).toBe(0);
    expect(lines(out.stdout).sort()).toEqual(
      e
        .state()
        .tasks.map((task) => task.id)
        .sort(),
    );
    expect(lines(out.stdout)).toHaveLength(3);
    const typed = await e.run([...submitAs(e.file("more.txt", listText(5, 100)), CARRIER, "GB", "--yes"), "--json", "--query", "type"]);
    expect(lines(typed.stdout)).toEqual(["task", "run"]);
  });

  it("selects from each task of status and each stored result of ledger lookup", async () => {
    const { e } = await withRun(12);
    const status = await e.run(["status", "--json", "--query", "status == 'success' && id || null"]);
    expect(lines(status.stdout).sort()).toEqual(
      e
        .state()
        .tasks.map((task) => task.id)
        .sort(),
    );
    const [first, second] = gbList(2);
    const lookup = await e.run(["ledger", "lookup", first!, second!, "--json", "--query", "identifier"]);
    expect(lines(lookup.stdout).sort()).toEqual([identifier(first!), identifier(second!)].sort());
  });

  it("selects from each row of results written to stdout as JSON lines", async () => {
    const { e } = await withRun(12);
    const ids = e.state().tasks.map((task) => task.id);
    const out = await e.run(["download", ...ids, "--json", "--query", "[identifier, number_type]"]);
    expect(out.code, out.stderr).toBe(0);
    const rows = lines(out.stdout).map((line) => JSON.parse(line) as [string, string]);
    expect(rows.map(([id]) => id).sort()).toEqual(gbList(12).map(identifier).sort());
    expect(new Set(rows.map(([, type]) => type))).toEqual(new Set(["mobile"]));
  });
});

describe("--query that cannot work", () => {
  it.each([
    ["does not parse", ["runs", "--json", "--query", "tasks["], /is not a JMESPath expression/],
    ["calls a function JMESPath does not have", ["runs", "--json", "--query", "ids(runs)"], /calls ids\(\), which JMESPath does not have/],
    ["comes without --json", ["balance", "--query", "balance_micros"], /add --json/],
  ])("is exit 2 before any request when it %s", async (_what, argv, message) => {
    const e = await sandbox();
    const out = await e.run(argv);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr).toMatch(message);
    expect(e.state().stats.requests).toBe(0);
  });

  it("fails on what is printed only after the command did its work: the tasks are submitted, and exit 2 says why", async () => {
    const e = await sandbox({ minTaskSize: 1 });
    await allowSmallTasks(e);
    const out = await e.run([...submitAs(e.file("list.txt", listText(5)), CARRIER, "GB", "--yes"), "--json", "--query", "sum(id)"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/sum\(id\)\\" failed on the output: TypeError: sum\(\) expected argument 1/);
    expect(e.state().tasks).toHaveLength(1);
    expect((await e.run(["runs", "--json", "--query", "runs[0].tasks"])).stdout).toBe("1\n");
  });

  it("is refused where the results take stdout in a format it cannot read", async () => {
    const { e } = await withRun(5);
    const out = await e.run(["download", e.state().tasks[0]!.id, "-o", "-", "--format", "csv", "--json", "--query", "identifier"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--query selects from JSON, and the results on stdout would be csv.");
  });
});
