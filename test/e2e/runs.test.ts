import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { filesHolding } from "../helpers/store.js";
import { writeWorkbook } from "../helpers/xlsx.js";
import {
  API_KEY,
  until,
  e2eSandboxes,
  identifier,
  gbList,
  lines,
  listedRuns,
  listText,
  submitAs,
  submittedIds,
  WAITING,
  type E2e,
} from "../helpers/sandbox.js";

/**
 * Runs: what one submit does until its output exists. A finished run's command starts a
 * new run (the list is checked again, except what the ledger serves fresh); an unfinished
 * one is continued with its journalled plan and keys, so nothing is paid for twice.
 */
const sandbox = e2eSandboxes();
const ACTIVITY = "number_activity_batch";

function activity(file: string, ...extra: string[]): string[] {
  return submitAs(file, ACTIVITY, "GB", ...extra);
}

/** The sandbox's tasks, oldest first. */
function taskCount(e: E2e): number {
  return e.state().tasks.length;
}

/** The first file under the state directory that holds the number, in any of its encodings. */
function holds(e: E2e, digits: string): string | undefined {
  return filesHolding(e.configDir, digits)[0];
}

describe("a finished run's command starts a new run", () => {
  it("checks an unchanged list again with --max-age 0 (a new task each night), and takes --resubmit as a no-op with a note", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const first = await e.run([...activity(list, "--yes", "--max-age", "0")]);
    expect(first.code, first.stderr).toBe(0);
    const second = await e.run([...activity(list, "--yes", "--max-age", "0", "--resubmit")]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("--resubmit is no longer needed");
    expect(lines(first.stdout)).toHaveLength(1);
    expect(lines(second.stdout)).toHaveLength(1);
    expect(second.stdout).not.toBe(first.stdout);
    expect(taskCount(e)).toBe(2);
  });

  it("writes tonight's results with tonight's checked_at, not last night's", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...activity(list, ...WAITING, "-o", "a.csv", "--max-age", "0")])).code).toBe(0);
    e.clock.ms += 24 * 3600_000;
    const again = await e.run([...activity(list, ...WAITING, "-o", "b.csv", "--max-age", "0")]);
    expect(again.code, again.stderr).toBe(0);
    const [headerA, rowA] = lines(readFileSync(join(e.dir, "a.csv"), "utf8"));
    const [headerB, rowB] = lines(readFileSync(join(e.dir, "b.csv"), "utf8"));
    expect(headerA).toBe("identifier,activated,checked_at");
    expect(headerB).toBe(headerA);
    expect(rowB!.split(",").at(-1)! > rowA!.split(",").at(-1)!).toBe(true);
    expect(taskCount(e)).toBe(2);
  });
});

describe("an unfinished run is continued", () => {
  it("stopped by SIGTERM, prints a resume line without --resubmit, and the same command finishes it with no second task", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 250 });
    const list = e.file("list.txt", listText(500));
    const argv = activity(list, ...WAITING, "-o", "out.csv", "--resubmit");
    const run = e.spawn(argv);
    await until(() => taskCount(e) === 1 && run.output().stderr.includes("submitted"), 20_000);
    run.child.kill("SIGTERM");
    const stopped = await run.done;
    expect(stopped.code).toBe(143);
    const resume = /Resume with: (.*)$/m.exec(stopped.stderr)?.[1];
    expect(resume).toBeDefined();
    expect(resume).not.toContain("--resubmit");
    const again = await e.bin(argv.filter((arg) => arg !== "--resubmit"));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("Carrying on run");
    // What was reserved and submitted before reads as before, not as a second charge.
    expect(again.stderr).toContain("Plan of the run carried on, as made when it began (its reservation was made then;");
    expect(again.stderr).not.toMatch(/^Plan: /m);
    expect(again.stderr).toMatch(/^Task [0-9a-f]{32}: submitted earlier by this run, carried on\.$/m);
    expect(taskCount(e)).toBe(1);
    expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(501);
  });

  it("abandons a run whose list changed before it was continued, says so with its id, and still keeps its paid results", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const list = e.file("list.txt", listText(500));
    // Timed out before the task finished: the run stays open.
    const first = await e.run([...activity(list, "--yes", "--wait", "--interval", "1", "--timeout", "30", "-o", "out.csv")]);
    expect(first.code).toBe(8);
    writeFileSync(list, listText(600));
    const again = await e.run([...activity(list, ...WAITING, "-o", "out.csv", "--max-age", "0")]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/Run \d{8}-\d{6}-[0-9a-f]{6} of this list is abandoned/);
    expect(taskCount(e)).toBe(2);
    // The abandoned run's task finished meanwhile: its results reached the ledger.
    const stats = await e.run(["ledger", "stats", "--json"]);
    expect(JSON.parse(stats.stdout)).toMatchObject({ results: 1100, tasks: 2 });
  });

  it("continues a run whose source only had a name cell edited: the same numbers, the same task", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const rows = (names: string) => ["name,phone", ...gbList(500).map((number, i) => `${names} ${i},${number}`)].join("\n") + "\n";
    const list = e.file("crm.csv", rows("Contact"));
    const first = await e.run([...activity(list, "--yes", "--wait", "--interval", "1", "--timeout", "30", "-o", "out.csv", "--join")]);
    expect(first.code).toBe(8);
    writeFileSync(list, rows("Renamed"));
    const again = await e.run([...activity(list, ...WAITING, "-o", "out.csv", "--join")]);
    expect(again.code, again.stderr).toBe(0);
    expect(taskCount(e)).toBe(1);
    expect(readFileSync(join(e.dir, "out.csv"), "utf8")).toContain("Renamed 0,");
  });
});

describe("the ledger serves fresh results", () => {
  it("uploads only the new numbers of a list that changed by 1%, and writes every row", async () => {
    const e = await sandbox({ minTaskSize: 10 });
    expect((await e.run(["config", "set", "min-task-size", "10"])).code).toBe(0);
    const night1 = e.file("night1.txt", listText(1000));
    expect((await e.run([...activity(night1, ...WAITING, "-o", "n1.csv")])).code).toBe(0);
    const night2 = e.file("night2.txt", listText(1010));
    const plan = await e.run([...activity(night2, "--dry-run", "--json", "--max-age", "7d")]);
    expect(JSON.parse(plan.stdout)).toMatchObject({ numbers: 10, reuse: { reused: 1000, checked_again: 0 } });
    const run = await e.run([...activity(night2, ...WAITING, "-o", "n2.csv", "--max-age", "7d")]);
    expect(run.code, run.stderr).toBe(0);
    expect(e.state().tasks[1]!.total).toBe(10);
    const out = lines(readFileSync(join(e.dir, "n2.csv"), "utf8"));
    expect(out).toHaveLength(1011);
    expect(new Set(out.slice(1).map((row) => row.split(",")[0]))).toEqual(new Set(gbList(1010).map(identifier)));
  });

  it("says, when --max-age excludes recent results, how many and what reusing them would save", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...activity(list, ...WAITING, "-o", "a.csv")])).code).toBe(0);
    const plan = await e.run([...activity(list, "--dry-run", "--max-age", "0")]);
    expect(plan.stderr).toMatch(
      /Not reused: 500 numbers have results checked at .*older than --max-age 0; --max-age 1d would reuse them and save \$1\.50 \(its plan reserves \$0\.00 instead of \$1\.50\)\./,
    );
    const json = await e.run([...activity(list, "--dry-run", "--max-age", "0", "--json")]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      numbers: 500,
      reuse: { reused: 0, not_reused: { numbers: 500, max_age_to_reuse_seconds: 86_400, would_save_micros: 1_500_000 } },
    });
  });

  it("creates no task when every number is fresh, and writes the output from the ledger alone", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...activity(list, ...WAITING, "-o", "a.csv")])).code).toBe(0);
    const balance = e.state().balance_micros;
    const again = await e.run([...activity(list, "--wait", "-o", "b.csv")]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("nothing to upload");
    expect(taskCount(e)).toBe(1);
    expect(e.state().balance_micros).toBe(balance);
    const rows = (name: string) => lines(readFileSync(join(e.dir, name), "utf8")).sort();
    expect(rows("b.csv")).toEqual(rows("a.csv"));
  });

  it("--changes lists exactly the numbers whose result the sandbox changed between two runs", async () => {
    const e = await sandbox({ drift: 0.2, seed: 3 });
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...activity(list, ...WAITING, "-o", "a.csv")])).code).toBe(0);
    const second = await e.run([...activity(list, ...WAITING, "-o", "b.csv", "--max-age", "0", "--changes", "changes.csv")]);
    expect(second.code, second.stderr).toBe(0);
    const activated = (name: string) =>
      lines(readFileSync(join(e.dir, name), "utf8"))
        .slice(1)
        .map((row) => row.split(",").slice(0, 2) as [string, string]);
    const before = new Map(activated("a.csv"));
    const changed = activated("b.csv")
      .filter(([id, value]) => before.get(id) !== value)
      .map(([id]) => id);
    expect(changed.length).toBeGreaterThan(0);
    const [header, ...rows] = lines(readFileSync(join(e.dir, "changes.csv"), "utf8"));
    expect(header).toBe("identifier,column,previous,current,previous_checked_at,checked_at");
    expect(rows.map((row) => row.split(",")[0]).sort()).toEqual(changed.sort());
    for (const row of rows) expect(row.split(",")[1]).toBe("activated");
  });
});

describe("the ledger keeps numbers only while asked to", () => {
  it("ledger forget leaves no trace of the digits in the ledger's files", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...activity(list, ...WAITING, "-o", "a.csv")])).code).toBe(0);
    const [first] = gbList(1);
    const digits = identifier(first!);
    const forgot = await e.run(["ledger", "forget", first!]);
    expect(forgot.code, forgot.stderr).toBe(0);
    const lookup = await e.run(["ledger", "lookup", first!, "--json"]);
    expect(lookup.stdout).toBe("");
    expect(holds(e, digits)).toBeUndefined();
    // Another number of the same task is still there, found the same way.
    expect(holds(e, identifier(gbList(2)[1]!))).toBeDefined();
  });

  it("with config set ledger off, no file under the state directory holds a checked number", async () => {
    const e = await sandbox();
    expect((await e.run(["config", "set", "ledger", "off"])).code).toBe(0);
    const list = e.file("list.txt", listText(500));
    const run = await e.run([...activity(list, ...WAITING, "-o", "a.csv", "--report", "r.html")]);
    expect(run.code, run.stderr).toBe(0);
    for (const number of gbList(500)) expect(holds(e, identifier(number)), number).toBeUndefined();
    const again = await e.run([...activity(list, "--yes", "--dry-run", "--json")]);
    expect(JSON.parse(again.stdout)).toMatchObject({ numbers: 500 });
  });
});

describe("an upgrade in the middle of a run never double-charges", () => {
  it("continues, waits for and downloads a task submitted by 0.1 (its journal imported once)", async () => {
    const e = await sandbox({ minTaskSize: 10 });
    const fixtures = join(import.meta.dirname, "..", "fixtures", "journal-0.1");
    const list = e.file("list.csv", readFileSync(join(fixtures, "list.csv"), "utf8"));
    // The task 0.1 created, under the key its journal recorded, from the upload file it made.
    const upload = e.file("upload.txt", Array.from({ length: 20 }, (_, i) => `4474001${String(i).padStart(5, "0")}\n`).join(""));
    const template = readFileSync(join(fixtures, "journal.jsonl"), "utf8");
    const key = /"idempotency_key":"([^"]+)"/.exec(template)![1]!;
    expect(createHash("sha256").update(readFileSync(upload)).digest("hex")).toBe(
      /"chunk":\{[^}]*"sha256":"([0-9a-f]+)"/.exec(template)![1],
    );
    const client = createClient({ baseUrl: e.sandbox.url, apiKey: API_KEY });
    const { task } = await client.submitTask({ serviceType: ACTIVITY, country: "GB", file: upload, idempotencyKey: key });
    await client.close();
    writeFileSync(
      join(e.configDir, "journal.jsonl"),
      template
        .replaceAll("{{BASE_URL}}", e.sandbox.url.replace(/\/$/, ""))
        .replaceAll("{{SOURCE}}", list)
        .replaceAll("{{TASK_ID}}", task.id),
    );
    expect((await e.run(["config", "set", "min-task-size", "10"])).code).toBe(0);
    const run = await e.run([...activity(list, ...WAITING, "-o", "out.csv")]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("from the journal of bulkcheck 0.1");
    expect(submittedIds(run.stderr)).toEqual([task.id]);
    expect(run.stderr).toContain(`Task ${task.id}: submitted earlier by this run, carried on.`);
    expect(taskCount(e)).toBe(1);
    expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(21);
    expect(readdirSync(e.configDir)).toContain("journal.jsonl.imported");
  });
});

describe("what a red team found, fixed", () => {
  it("keeps the same numbers in a .csv and an .xlsx apart: two runs, and each join goes back to its own source", async () => {
    const e = await sandbox();
    const numbers = gbList(500);
    const csv = e.file("crm.csv", ["name,phone", ...numbers.map((number, i) => `C${i},${number}`)].join("\n") + "\n");
    const xlsx = await writeWorkbook(join(e.dir, "crm.xlsx"), [
      { name: "Contacts", rows: [["name", "phone"], ...numbers.map((number, i) => [`X${i}`, number])] },
    ]);
    const fromCsv = await e.run([...activity(csv, ...WAITING, "--join", "-o", "a.csv", "--max-age", "0")]);
    expect(fromCsv.code, fromCsv.stderr).toBe(0);
    const fromXlsx = await e.run([...activity(xlsx, ...WAITING, "--join", "-o", "b.csv", "--max-age", "0")]);
    expect(fromXlsx.code, fromXlsx.stderr).toBe(0);
    expect(fromXlsx.stderr).not.toContain("Carrying on");
    expect(taskCount(e)).toBe(2);
    expect(lines(readFileSync(join(e.dir, "a.csv"), "utf8"))[1]).toMatch(/^C0,/);
    expect(lines(readFileSync(join(e.dir, "b.csv"), "utf8"))[1]).toMatch(/^X0,/);
    const { runs } = await listedRuns(e);
    expect(runs.map((run) => run.source).sort()).toEqual([csv, xlsx].sort());
  });

  it("asks again before money is reserved for a run's part the service no longer knows (a restarted sandbox)", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const list = e.file("list.txt", listText(500));
    const first = await e.run([...activity(list, "--yes", "--wait", "--interval", "1", "--timeout", "30")]);
    expect(first.code).toBe(8);
    // The same base URL and profile, the same store: only the service forgot the task.
    const port = Number(new URL(e.sandbox.url).port);
    await e.sandbox.close();
    const restarted = await startSandbox({ apiKey: API_KEY, port, noResultRate: 0, now: () => e.clock.ms });
    try {
      const again = await e.run([...activity(list)], { stdin: "" });
      expect(again.code).toBe(2);
      expect(again.stderr).toContain("add --yes");
      expect(restarted.inspect().tasks).toHaveLength(0);
    } finally {
      await restarted.close();
    }
  });

  it("asks before money is reserved for a finished run's list submitted again", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...activity(list, "--yes")])).code).toBe(0);
    const again = await e.run([...activity(list, "--max-age", "0")], { stdin: "" });
    expect(again.code).toBe(2);
    expect(taskCount(e)).toBe(1);
  });

  it("joins the whole run when given one task of a split list, so no checked row is written as no_result", async () => {
    const e = await sandbox({ maxTaskSize: 500 });
    expect((await e.run(["config", "set", "max-task-size", "500"])).code).toBe(0);
    const numbers = gbList(1500);
    const list = e.file("crm.csv", ["name,phone", ...numbers.map((number, i) => `C${i},${number}`)].join("\n") + "\n");
    const run = await e.run([...activity(list, ...WAITING)]);
    expect(run.code, run.stderr).toBe(0);
    const ids = lines(run.stdout);
    expect(ids).toHaveLength(3);
    const joined = await e.run(["download", ids[0]!, "--join", list, "-o", "joined.csv"]);
    expect(joined.code, joined.stderr).toBe(0);
    expect(joined.stderr).toContain("Joining the whole run");
    const statuses = lines(readFileSync(join(e.dir, "joined.csv"), "utf8"))
      .slice(1)
      .map((row) => row.split(",")[4]);
    expect(statuses.filter((status) => status !== "checked")).toEqual([]);
  });

  it("never carries a run on against another service: the same command against another base URL is a run of its own", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const other = await sandbox();
    const list = e.file("list.txt", listText(500));
    const argv = activity(list, "--yes", "--wait", "--interval", "1", "-o", "out.csv");
    // Timed out (30 s of the sandbox's clock) long before its task finishes (500 s): open.
    expect((await e.run([...argv, "--timeout", "30"])).code).toBe(8);
    // The same machine's store (config directory), the other service, with that service's clock.
    const elsewhere = await other.run(argv, { env: { BULKCHECK_CONFIG_DIR: e.configDir } });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(elsewhere.stderr).not.toContain("Carrying on");
    expect(other.state().tasks).toHaveLength(1);
    expect(submittedIds(elsewhere.stderr)).toEqual([other.state().tasks[0]!.id]);
    // The first service's run is still open, to be carried on there; the other service's ran on its own.
    expect((await listedRuns(e)).runs.map((run) => run.state)).toEqual(["open"]);
    expect((await listedRuns(e, ["--all"])).runs.map((run) => run.state).sort()).toEqual(["finished", "open"]);
  });

  it("refuses to join a stdin submit's task with a file it cannot tell is the list that was piped", async () => {
    const e = await sandbox();
    const submitted = await e.run([...activity("-", ...WAITING)], { stdin: listText(500) });
    expect(submitted.code, submitted.stderr).toBe(0);
    const other = e.file("other.csv", ["name,phone", ...gbList(10, 5000).map((number) => `x,${number}`)].join("\n") + "\n");
    const joined = await e.run(["download", lines(submitted.stdout)[0]!, "--join", other, "-o", "joined.csv"]);
    expect(joined.code).toBe(3);
    expect(joined.stderr).toContain("submitted from stdin");
  });

  it("refuses a fixed --idempotency-key the service answers with another profile's older task", async () => {
    const e = await sandbox();
    // The same numbers, so the service replays its task for the key instead of refusing another file.
    const listA = e.file("a.txt", listText(500));
    const listB = e.file("b.txt", listText(500));
    expect((await e.run([...activity(listA, "--yes", "--idempotency-key", "nightly")])).code).toBe(0);
    e.clock.ms += 3_600_000;
    const other = await e.run([...activity(listB, "--yes", "--idempotency-key", "nightly", ...WAITING.slice(1), "-o", "b.csv")], {
      env: { BULKCHECK_CONFIG_DIR: join(e.dir, "elsewhere") },
    });
    expect(other.code).toBe(3);
    expect(other.stderr, other.stderr).toContain("the key was used before");
    expect(existsSync(join(e.dir, "b.csv"))).toBe(false);
  });
});
