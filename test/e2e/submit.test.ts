import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FormData, request } from "undici";
import { describe, expect, it } from "vitest";
import {
  API_KEY,
  TASK_ID,
  e2eSandboxes,
  identifier,
  gbList,
  lines,
  listText,
  promptedSubmitArgs,
  submitArgs,
  storedRuns,
  storedTasks,
  submittedIds,
  WAITING,
} from "../helpers/sandbox.js";

/** An ISO 8601 UTC time, as the store and every checked_at column write it. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

const sandbox = e2eSandboxes();

describe("bulkcheck submit", () => {
  it("prints exactly the task id on stdout and the summary, plan and next step on stderr", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const out = await e.run(submitArgs(list));
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^[0-9a-f]{32}\n$/);
    const id = out.stdout.trim();
    expect(e.state().tasks.map((task) => task.id)).toEqual([id]);
    expect(out.stderr).toMatch(/kept \(to check\)\s+500/);
    expect(out.stderr).toContain("Plan: 500 numbers in 1 task(s) of number_validation_batch for GB; reservation $0.50");
    expect(out.stderr).toContain(`Next: bulkcheck wait ${id}`);
    expect(out.stderr).not.toContain("already submitted");
  });

  it("prints each task as one JSON line with --json, then the run, each with its type, and keeps stdout free of anything else", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--json"));
    expect(out.code).toBe(0);
    const rows = lines(out.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows).toHaveLength(2);
    const [run] = await storedRuns(e);
    expect(rows[0]).toMatchObject({
      type: "task",
      run: run!.id,
      product: "number_validation_batch",
      status: "processing",
      country: "GB",
      total: 500,
    });
    expect(rows[1]).toEqual(
      expect.objectContaining({ type: "run", run: run!.id, kept: 500, uploaded: 500, reused: 0, saved_micros: 0, tasks: [rows[0]!.id] }),
    );
    expect(rows[0]!.id).toMatch(TASK_ID);
    expect(rows[0]).not.toHaveProperty("result_url");
    expect(out.stderr).toContain("Plan: 500 numbers");
  });

  it("with --wait -o and --json prints the task, the output and the run, each with its type and the run's id", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), ...WAITING, "-o", "out.csv", "--json"));
    expect(out.code, out.stderr).toBe(0);
    const objects = lines(out.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    const [run] = await storedRuns(e);
    expect(objects.map((object) => [object.type, object.run])).toEqual([
      ["task", run!.id],
      ["output", run!.id],
      ["run", run!.id],
    ]);
    expect(objects[2]).toMatchObject({ reused: 0, saved_micros: 0 });
  });

  it("reads the list from stdin with -", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs("-"), { stdin: listText(500) });
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toMatch(TASK_ID);
    expect(e.state().tasks[0]).toMatchObject({ id: out.stdout.trim(), submitted_lines: 500 });
  });

  it("uploads nothing with --dry-run and says so", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--dry-run"));
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("reservation $0.50");
    expect(out.stderr).toContain("Dry run: nothing was uploaded.");
    expect(e.state().tasks).toEqual([]);
    expect(e.state().stats.by_route.submit).toBeUndefined();
    expect(await storedRuns(e)).toEqual([]);
  });

  it("stops with exit 5 before uploading when the estimate is over --max-cost", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--max-cost", "0.40"));
    expect(out.code).toBe(5);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("error: The reservation $0.50 is over --max-cost $0.40.");
    expect(out.stderr).toContain("Raise --max-cost");
    expect(e.state().tasks).toEqual([]);
  });

  it("goes ahead when the estimate is within --max-cost", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--max-cost", "0.50"));
    expect(out.code).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
  });

  it("stops with exit 5 before uploading when the balance cannot cover the reservation", async () => {
    const e = await sandbox({ balanceMicros: 100_000 });
    const out = await e.run(submitArgs(e.file("list.txt", listText(500))));
    expect(out.code).toBe(5);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("The balance $0.10 cannot cover the reservation of $0.50.");
    expect(out.stderr).toContain("Top up the account");
    expect(e.state().stats.by_route.submit).toBeUndefined();
    expect(e.state().ledger).toEqual([]);
  });

  it("exits 5 when the service itself answers 40200 (insufficient balance)", async () => {
    // The service charges more than bulkcheck's price list says, so the local check passes.
    const e = await sandbox({ balanceMicros: 1_000_000, prices: { number_validation_batch: 5_000 } });
    const out = await e.run(submitArgs(e.file("list.txt", listText(500))));
    expect(out.code).toBe(5);
    expect(out.stdout).toBe("");
    expect(out.stderr).toMatch(/error: .*balance/i);
    expect(e.state().tasks).toEqual([]);
  });

  it("takes the task in flight when the same list is submitted again while it processes: no new task, nothing reserved twice", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const list = e.file("list.txt", listText(500));
    const first = await e.run(submitArgs(list));
    // Without --wait a run ends once its tasks are submitted; its task is still processing.
    const again = await e.run(submitArgs(list));
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(again.stderr).toContain("In flight: 500 numbers are in task(s) submitted by another run and still processing");
    const json = await e.run(submitArgs(list, "--json"));
    const rows = lines(json.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows[0]).toMatchObject({ type: "task", id: first.stdout.trim(), in_flight: true });
    expect(rows[1]).toMatchObject({
      type: "run",
      uploaded: 0,
      in_flight: 500,
      in_flight_tasks: [first.stdout.trim()],
      saved_micros: 500_000,
    });
    const state = e.state();
    expect(state.tasks).toHaveLength(1);
    expect(state.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
    // The store tells the same: one task, still unfinished, none of its results in yet.
    const status = await e.run(["store", "status", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ tasks: 1, unfinished_tasks: 1, tasks_with_results: 0, results: 0 });
  });

  it("checks the same list again in a new run with --max-age 0: a new task, reserved again, never the old task back", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const first = await e.run(submitArgs(list));
    const again = await e.run(submitArgs(list, "--max-age", "0"));
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toMatch(TASK_ID);
    expect(again.stdout).not.toBe(first.stdout);
    expect(again.stderr).not.toContain("already submitted");
    const state = e.state();
    expect(state.tasks.map((task) => task.id)).toEqual([first.stdout.trim(), again.stdout.trim()]);
    expect(state.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(2);
    expect((await storedRuns(e)).map((run) => run.state)).toEqual(["finished", "finished"]);
  });

  it("gives the same numbers in another file a run and a task of their own (two sources, no collision)", async () => {
    const e = await sandbox();
    const first = await e.run(submitArgs(e.file("a.txt", listText(500))));
    const csv =
      "name,phone\n" +
      gbList(500)
        .map((n, i) => `person ${i},${identifier(n)}`)
        .join("\n") +
      "\n";
    // --max-age 0: checked again (the first file's task would otherwise serve these numbers).
    const again = await e.run(submitArgs(e.file("b.csv", csv), "--max-age", "0"));
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toMatch(TASK_ID);
    expect(again.stdout).not.toBe(first.stdout);
    expect(e.state().tasks).toHaveLength(2);
    const runs = await storedRuns(e);
    expect(runs.map((run) => run.source.path)).toEqual([join(e.dir, "a.txt"), join(e.dir, "b.csv")]);
    expect(runs.map((run) => run.tasks.map((task) => task.taskId))).toEqual([[first.stdout.trim()], [again.stdout.trim()]]);
  });

  it("accepts --resubmit as a no-op with a note: a finished run's list is checked again anyway", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const first = await e.run(submitArgs(list));
    const second = await e.run(submitArgs(list, "--resubmit", "--max-age", "0"));
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("--resubmit is no longer needed");
    expect(second.stdout.trim()).toMatch(TASK_ID);
    expect(second.stdout).not.toBe(first.stdout);
    expect(second.stderr).not.toContain("already submitted");
    expect(e.state().tasks).toHaveLength(2);
    expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(2);
  });

  it("sends --idempotency-key verbatim and stores it with the task id", async () => {
    const e = await sandbox();
    const key = "nightly-crm-2025-01-15";
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--idempotency-key", key));
    expect(out.code).toBe(0);
    const id = out.stdout.trim();
    const tasks = await storedTasks(e);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ idempotencyKey: key, taskId: id, replayed: false, submittedAt: expect.any(String) });
    // Another client sending the same key gets the same task back: the service saw this exact key.
    const form = new FormData();
    form.append("service_type", "number_validation_batch");
    form.append("country", "GB");
    form.append("file", new Blob([gbList(500).map(identifier).join("\n") + "\n"]), "numbers.txt");
    const response = await request(`${e.sandbox.url}/api/v1/bulk-tasks`, {
      method: "POST",
      headers: { "x-api-key": API_KEY, "idempotency-key": key },
      body: form,
    });
    const body = (await response.body.json()) as { code: number; data: { id: string } };
    expect(body.code).toBe(0);
    expect(body.data.id).toBe(id);
    expect(e.state().tasks).toHaveLength(1);
  });

  it("refuses an --idempotency-key over 128 characters with exit 2 before anything is sent", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--idempotency-key", "k".repeat(129)));
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("1 to 128 characters");
    expect(e.state().stats.requests).toBe(0);
  });

  it("accepts an --idempotency-key of exactly 128 characters", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--idempotency-key", "k".repeat(128)));
    expect(out.code).toBe(0);
    expect((await storedTasks(e)).map((task) => task.idempotencyKey)).toEqual(["k".repeat(128)]);
  });

  it("submits, waits and downloads in one command with --wait -o FILE", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "0.2", "-o", "results.csv"));
    expect(out.code).toBe(0);
    // The results are the data here: the id goes to stderr, stdout stays empty.
    expect(out.stdout).toBe("");
    const [id] = submittedIds(out.stderr);
    expect(id).toMatch(TASK_ID);
    expect(out.stderr).toContain(`task ${id} success: 500 checked, 0 without result`);
    expect(out.stderr).toContain(`Wrote 500 rows to ${join(e.dir, "results.csv")}`);
    const csv = lines(readFileSync(join(e.dir, "results.csv"), "utf8"));
    expect(csv[0]).toBe("identifier,activated,checked_at");
    expect(csv.slice(1).map((row) => row.split(",")[0])).toEqual(gbList(500).map(identifier));
    // Every row carries when its task was first seen succeeded, as the store recorded it.
    const [task] = await storedTasks(e);
    expect(task!.checkedAt).toMatch(ISO_UTC);
    expect(csv.slice(1).every((row) => new RegExp(`^\\d+,(true|false),${task!.checkedAt}$`).test(row))).toBe(true);
  });

  it("with --wait -o - writes only the results on stdout and the task id on stderr", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "0.2", "-o", "-"));
    expect(out.code).toBe(0);
    const csv = lines(out.stdout);
    expect(csv[0]).toBe("identifier,activated,checked_at");
    expect(csv).toHaveLength(501);
    expect(out.stderr).toContain(`Task ${e.state().tasks[0]!.id} submitted.`);
  });

  it("refuses -o without --wait (exit 2) and uploads nothing", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "-o", "results.csv"));
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("-o and --join need --wait");
    expect(e.state().tasks).toEqual([]);
  });

  it("refuses to overwrite -o FILE without --force before uploading (exit 2)", async () => {
    const e = await sandbox();
    e.file("results.csv", "precious\n");
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "-o", "results.csv"));
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("results.csv already exists");
    expect(out.stderr).toContain("--force");
    expect(e.state().tasks).toEqual([]);
    expect(readFileSync(join(e.dir, "results.csv"), "utf8")).toBe("precious\n");
  });

  it("refuses a list with too few numbers to check with exit 3 and uploads nothing", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(20))));
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("A task needs at least 500 numbers; this list has 20 to check.");
    expect(out.stderr).toContain("bulkcheck config set min-task-size");
    expect(e.state().tasks).toEqual([]);
  });

  it("refuses an unknown --type or a missing --country with exit 2", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const type = await e.run(["submit", list, "--type", "number_magic_batch", "--country", "GB"]);
    expect(type.code).toBe(2);
    expect(type.stderr).toContain('Unknown --type "number_magic_batch"');
    const country = await e.run(["submit", list, "--type", "number_validation_batch"]);
    expect(country.code).toBe(2);
    expect(country.stderr).toContain("--country is required");
    expect(e.state().stats.requests).toBe(0);
  });

  it("silences notes with --quiet but still prints the task id", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"));
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^[0-9a-f]{32}\n$/);
    expect(out.stderr).toBe("");
  });

  it("derives a bc2- key per run and part: the same key while the run is continued, a new one for a new run", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const list = e.file("list.txt", listText(500));
    // Timed out before the task finished: the run stays open, and the same command carries it on.
    const unfinished = [...submitArgs(list, "--quiet"), "--wait", "--interval", "1", "--timeout", "10", "-o", "out.csv"];
    expect((await e.run(unfinished)).code).toBe(8);
    expect((await e.run(unfinished)).code).toBe(8);
    const [run] = await storedRuns(e);
    expect(run!.tasks).toHaveLength(1);
    expect(run!.tasks[0]!.idempotencyKey).toMatch(/^bc2-[0-9a-f]{48}$/);
    expect(e.state().tasks).toHaveLength(1);
    // Waited for to the end, the run writes its output and finishes with that one task.
    const finished = await e.run([...submitArgs(list, "--quiet"), "--wait", "--interval", "60", "-o", "out.csv"]);
    expect(finished.code).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
    // A new run of the same list derives another key: a new task (--max-age 0, or the ledger would serve every number).
    const fresh = await e.run([...submitArgs(list, "--quiet"), "--max-age", "0"]);
    expect(fresh.code).toBe(0);
    const runs = await storedRuns(e);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.tasks[0]!.idempotencyKey).toMatch(/^bc2-[0-9a-f]{48}$/);
    expect(runs[1]!.tasks[0]!.idempotencyKey).not.toBe(run!.tasks[0]!.idempotencyKey);
    expect(e.state().tasks).toHaveLength(2);
  });

  it("prints one id (or JSON line) per task when the list is split, and wait and download take them all", async () => {
    const e = await sandbox();
    expect((await e.run(["config", "set", "max-task-size", "600"])).code).toBe(0);
    const list = e.file("list.txt", listText(1500));
    const plain = await e.run(submitArgs(list, "--dry-run"));
    expect(plain.stderr).toContain("1,500 numbers in 3 task(s)");
    const json = await e.run(submitArgs(list, "--json"));
    expect(json.code).toBe(0);
    const tasks = lines(json.stdout)
      .map((line) => JSON.parse(line) as { type: string; id: string; total: number })
      .filter((object) => object.type === "task");
    expect(tasks.map((task) => task.total)).toEqual([500, 500, 500]);
    // Printed in list order; the parts upload at once, so the service may have created them in any order.
    expect(new Set(tasks.map((task) => task.id))).toEqual(new Set(e.state().tasks.map((task) => task.id)));
    // The first run finished with its tasks submitted: the same list again with --max-age 0 is a new run, printed one id per line.
    const again = await e.run(submitArgs(list, "--max-age", "0"));
    expect(new Set(lines(again.stdout))).toEqual(
      new Set(
        e
          .state()
          .tasks.slice(3)
          .map((task) => task.id),
      ),
    );
    expect(lines(again.stdout)).toHaveLength(3);
    const ids = again.stdout;
    expect((await e.run(["wait", "-", "--interval", "0.2", "--quiet"], { stdin: ids })).code).toBe(0);
    const download = await e.run(["download", "-"], { stdin: ids });
    expect(download.code).toBe(0);
    expect(
      lines(download.stdout)
        .slice(1)
        .map((row) => row.split(",")[0]),
    ).toEqual(gbList(1500).map(identifier));
  });

  it("exits 3 when the service refuses the task as it is (42200), having reserved nothing", async () => {
    // The service's minimum is higher than bulkcheck's configured one.
    const e = await sandbox({ minTaskSize: 1000 });
    const out = await e.run(submitArgs(e.file("list.txt", listText(500))));
    expect(out.code).toBe(3);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("(42200)");
    expect(out.stderr).toContain("a task needs at least 1000");
    expect(e.state().ledger).toEqual([]);
  });

  it("exits 7 without retrying when too many tasks are unfinished (42900)", async () => {
    const e = await sandbox({ maxUnfinished: 1, numbersPerSecond: 1 });
    expect((await e.run(submitArgs(e.file("a.txt", listText(500)), "--quiet"))).code).toBe(0);
    const out = await e.run(submitArgs(e.file("b.txt", listText(500, 1000))));
    expect(out.code).toBe(7);
    expect(out.stderr).toContain("(42900)");
    expect(out.stderr).toContain("Wait for running tasks to finish");
    expect(e.state().stats.by_route.submit).toBe(2);
  });

  it("with --wait exits 6 when the task fails, and writes no -o file", async () => {
    const e = await sandbox({ failRate: 1 });
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "0.2", "-o", "results.csv"));
    expect(out.code).toBe(6);
    expect(submittedIds(out.stderr)).toEqual([expect.stringMatching(TASK_ID)]);
    expect(existsSync(join(e.dir, "results.csv"))).toBe(false);
  });

  it("with --wait --timeout exits 8 and says how to resume: the same command, which carries the run on without a second task", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const argv = submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "0.2", "--timeout", "2");
    const out = await e.run(argv);
    expect(out.code).toBe(8);
    expect(out.stdout.trim()).toMatch(TASK_ID);
    const resume = /Resume with: bulkcheck (.*)$/m.exec(out.stderr)?.[1];
    expect(resume?.split(" ")).toEqual(argv);
    const again = await e.run(argv);
    expect(again.code).toBe(8);
    expect(again.stderr).toContain("Carrying on run");
    expect(again.stdout).toBe(out.stdout);
    expect(e.state().tasks).toHaveLength(1);
  });

  it("asks before reserving on a terminal, and uploads nothing unless the answer is yes", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const no = await e.run(promptedSubmitArgs(list), { tty: true, stdin: "n\n" });
    expect(no.code).toBe(130);
    expect(no.stderr).toContain("Reserve $0.50 of $10.00? [y/N]");
    expect(no.stderr).toContain("Cancelled; nothing was uploaded.");
    expect(no.stdout).toBe("");
    expect(e.state().tasks).toEqual([]);
    const yes = await e.run(promptedSubmitArgs(list), { tty: true, stdin: "y\n" });
    expect(yes.code).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
    const noQuestion = await e.run(submitArgs(list, "--max-age", "0", "--yes"), { tty: true });
    expect(noQuestion.code).toBe(0);
    expect(noQuestion.stderr).not.toContain("[y/N]");
    expect(e.state().tasks).toHaveLength(2);
  });

  it("records no run when the submit never reached the upload", async () => {
    const e = await sandbox();
    expect((await e.run(submitArgs(e.file("list.txt", listText(500)), "--max-cost", "0.01"))).code).toBe(5);
    expect(await storedRuns(e)).toEqual([]);
    expect(existsSync(join(e.configDir, "journal.jsonl"))).toBe(false);
  });
});

/** Issue 34: whatever a run does with its list, its --json says what preparation found in it. */
describe("every run's --json carries its preparation", () => {
  /** A list of 500 numbers with one invalid row and one duplicate: a preparation worth reading. */
  const listWithRejects = () => [...gbList(500), "12345", gbList(1)[0]].join("\n") + "\n";
  const preparation = { rows_read: 502, kept: 500, invalid_cnt: 1, duplicate_cnt: 1 };
  const objects = (stdout: string) => lines(stdout).map((line) => JSON.parse(line) as Record<string, unknown>);

  it("a run that takes another run's task in flight: on the task's line and on the run's", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const list = e.file("list.txt", listWithRejects());
    const first = await e.run(submitArgs(list));
    const out = await e.run(submitArgs(list, "--json"));
    expect(out.code, out.stderr).toBe(0);
    const [task, run] = objects(out.stdout);
    expect(task).toMatchObject({ type: "task", id: first.stdout.trim(), in_flight: true, preparation });
    expect(run).toMatchObject({ type: "run", uploaded: 0, in_flight: 500, preparation });
  });

  it("a run that reuses every number: on the run's line, its only one", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listWithRejects());
    expect((await e.run(submitArgs(list, ...WAITING.slice(1)))).code).toBe(0);
    const out = await e.run(submitArgs(list, "--json"));
    expect(out.code, out.stderr).toBe(0);
    const printed = objects(out.stdout);
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatchObject({ type: "run", uploaded: 0, reused: 500, tasks: [], preparation });
  });

  it("a run carried on: on its tasks' lines and on the run's", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const list = e.file("list.txt", listWithRejects());
    expect((await e.run(submitArgs(list, "--wait", "--interval", "0.2", "--timeout", "2"))).code).toBe(8);
    const out = await e.run(submitArgs(list, "--json"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("Carrying on run");
    const [task, run] = objects(out.stdout);
    expect(task).toMatchObject({ type: "task", carried_on: true, preparation });
    expect(run).toMatchObject({ type: "run", uploaded: 500, preparation });
  });
});
