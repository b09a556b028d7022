import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { BIN } from "../helpers/cli.js";
import { allowSmallTasks, parseBoxedTable, parseDelimited } from "../helpers/results-fixtures.js";
import { API_KEY, e2eSandboxes, gbList, lines, listText, submitArgs, submitAs, TASK_ID, type E2e } from "../helpers/sandbox.js";
import { bulkcheckCommand, renderScreen, startInTerminal } from "../helpers/terminal.js";

/** Issue 14: bulkcheck at a terminal and in cron. */
const sandbox = e2eSandboxes();
// Real processes, some in a pseudo-terminal: generous, for a machine busy with other work.
vi.setConfig({ testTimeout: 120_000 });
const run = promisify(execFile);

/** A CRM export: a header, a name column and a phone column, one row per number of gbList. */
function crm(count: number, offset = 0): string {
  return ["name,phone", ...gbList(count, offset).map((phone, i) => `person ${i},${phone}`)].join("\n") + "\n";
}

/** Runs a POSIX shell script in the work dir with `bulkcheck` meaning the built binary. */
async function shell(e: E2e, script: string) {
  return run("sh", ["-c", `bulkcheck() { "$NODE" "$BIN" "$@"; }\n${script}`], {
    cwd: e.dir,
    env: { PATH: process.env.PATH, HOME: e.dir, ...e.env, NODE: process.execPath, BIN },
  });
}

describe("cron", () => {
  /**
   * The README's nightly line for `night`: dated output and changes files, so no --force
   * (which would also join a changed source), and results younger than 7 days reused.
   */
  const cronLine = (list: string, night: string) => [
    "submit",
    list,
    "--type",
    "number_activity_batch",
    "--country",
    "GB",
    "--wait",
    "--join",
    "-o",
    `checked/crm-${night}.csv`,
    "--changes",
    `checked/changes-${night}.csv`,
    "--max-age",
    "7d",
    "--yes",
    "--quiet",
    "--timeout",
    "3600",
  ];

  it("the README's cron line is silent on success: nothing on stdout or stderr, exit 0, and the dated file is written", async () => {
    const e = await sandbox({ fakeClock: false });
    e.file("crm.csv", crm(600));
    // As crontab runs it (sh -c, with cron's \% for a literal %).
    const out = await shell(e, "mkdir -p checked && bulkcheck " + cronLine("crm.csv", "$(date +\\%F)").join(" "));
    expect(out).toEqual({ stdout: "", stderr: "" });
    const written = readdirSync(join(e.dir, "checked")).sort();
    expect(written).toHaveLength(2);
    expect(written[0]).toMatch(/^changes-\d{4}-\d{2}-\d{2}\.csv$/);
    expect(written[1]).toMatch(/^crm-\d{4}-\d{2}-\d{2}\.csv$/);
    expect(lines(readFileSync(join(e.dir, "checked", written[1]!), "utf8"))).toHaveLength(601);
    // Nothing was checked before: no changes, only the header.
    expect(lines(readFileSync(join(e.dir, "checked", written[0]!), "utf8"))).toHaveLength(1);
    // The next run of the same list within 7 days is just as silent: every number is fresh, so no task, and the file comes from the ledger.
    expect(await e.bin(cronLine(join(e.dir, "crm.csv"), "next-night"))).toEqual({ code: 0, stdout: "", stderr: "" });
    // The same rows, each now `reused` (from the ledger) where the first night's were `checked`.
    expect(readFileSync(join(e.dir, "checked", "crm-next-night.csv"), "utf8")).toBe(
      readFileSync(join(e.dir, "checked", written[1]!), "utf8").replaceAll(",checked,", ",reused,"),
    );
    expect(e.state().tasks).toHaveLength(1);
  });

  it("the cron line is loud on failure: a message on stderr and a non-zero exit", async () => {
    const e = await sandbox({ fakeClock: false, failRate: 1 });
    mkdirSync(join(e.dir, "checked"));
    const out = await e.bin(cronLine(e.file("nightly.csv", crm(600)), "failed"));
    expect(out.code).toBe(6);
    expect(out.stdout).toBe("");
    expect(out.stderr).toMatch(/^error: 1 task\(s\) failed/m);
    const badKey = await e.bin(cronLine(e.file("nightly.csv", crm(600)), "refused"), {
      env: { BULKCHECK_API_KEY: "sk_wrong_0000000000000000" },
    });
    expect(badKey.code).toBe(4);
    expect(badKey.stderr).toContain("(40100)");
  });
});

describe("quiet means quiet", () => {
  it("prints nothing on stderr under --quiet when more than ten tasks run at once (no Node warning about abort listeners)", async () => {
    const e = await sandbox({ fakeClock: false, minTaskSize: 1, maxTaskSize: 2, resultDelaySeconds: 1 });
    await allowSmallTasks(e, 2);
    const out = await e.bin(submitArgs(e.file("list.txt", listText(24)), "--wait", "--interval", "0.2", "-o", "out.csv", "--quiet"));
    expect(out.code, out.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(12);
    expect(out).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

describe("ids wherever they come from", () => {
  it("runs the README's Quick start as written for a list split into two tasks", async () => {
    const e = await sandbox({ fakeClock: false });
    await e.run(["config", "set", "max-task-size", "600"]);
    e.file("crm.csv", crm(1200));
    const out = await shell(
      e,
      [
        "set -e",
        "ID=$(bulkcheck submit crm.csv --type number_activity_batch --country GB --yes)",
        'bulkcheck wait "$ID" --timeout 3600',
        'bulkcheck download "$ID" --join crm.csv -o crm-checked.csv',
        'printf "%s\\n" "$ID" > ids.txt',
      ].join("\n"),
    );
    const ids = lines(readFileSync(join(e.dir, "ids.txt"), "utf8"));
    expect(ids).toHaveLength(2);
    expect(lines(out.stdout)).toEqual(ids.map((id) => `${id}\tsuccess`));
    const joined = parseDelimited(readFileSync(join(e.dir, "crm-checked.csv"), "utf8"));
    expect(joined).toHaveLength(1201);
    expect(joined[0]).toEqual(["name", "phone", "identifier", "activated", "bulkcheck_status", "bc_checked_at"]);
    expect(new Set(joined.slice(1).map((row) => row[4]))).toEqual(new Set(["checked"]));
    for (const row of joined.slice(1)) expect(row[5]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
  });

  it("takes ids as arguments, as -, and as one argument of several lines, for every command that takes ids", async () => {
    const e = await sandbox({ minTaskSize: 1, noResultRate: 0.2 });
    await allowSmallTasks(e, 10);
    const ids = lines((await e.run(submitArgs(e.file("list.txt", listText(20))))).stdout);
    expect(ids).toHaveLength(2);
    const twoLines = ids.join("\n");
    for (const argv of [
      ["wait", twoLines, "--interval", "0.2"],
      ["status", twoLines],
      ["download", `  ${ids[0]}\n${ids[1]}\n`, "-o", "-"],
    ]) {
      const out = await e.run(argv);
      expect(out.code, `${argv[0]}: ${out.stderr}`).toBe(0);
    }
    const fromStdin = await e.run(["status", "-"], { stdin: `${twoLines}\n` });
    expect(
      lines(fromStdin.stdout)
        .slice(1)
        .map((line) => line.split("\t")[0]),
    ).toEqual(ids);
    const retried = await e.run(["retry-failed", twoLines, "--dry-run"]);
    expect(retried.code, retried.stderr).toBe(0);
    for (const id of ids) expect(retried.stderr).toContain(`numbers of task ${id} got no result`);
  });
});

describe("output that fits", () => {
  it.each([80, 120])("draws the status table within %i columns, one line per task, the ids whole", async (columns) => {
    const e = await sandbox({ minTaskSize: 1 });
    await allowSmallTasks(e, 10);
    const ids = lines((await e.run(submitArgs(e.file("list.txt", listText(30))))).stdout);
    const out = await e.run(["status", ...ids], { tty: true, columns });
    expect(out.code).toBe(0);
    const table = lines(out.stdout);
    for (const line of table) expect(line.length, line).toBeLessThanOrEqual(columns);
    // Top border, header, the line under it, one line per task, bottom border: no lines between rows.
    expect(table).toHaveLength(4 + ids.length);
    expect(table.filter((line) => line.startsWith("├"))).toHaveLength(1);
    const cells = parseBoxedTable(out.stdout);
    expect(cells.slice(1).map((row) => row[0])).toEqual(ids);
    expect(cells[0]).toContain("STATUS");
  });

  it("keeps piped tables as TSV with every column", async () => {
    const e = await sandbox();
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const out = await e.run(["status", id]);
    expect(lines(out.stdout)[0]).toBe("ID\tPRODUCT\tCOUNTRY\tSTATUS\tTOTAL\tCHECKED\tNO RESULT\tCREATED");
  });

  it("sums a list up in a block of at most ten lines, leaving out classes with no rows", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", [...gbList(3), gbList(1)[0], "12345", ""].join("\n") + "\n");
    const out = await e.run(["validate", list, "--country", "GB"]);
    expect(out.code).toBe(0);
    const summary = lines(out.stderr);
    expect(summary.length).toBeLessThanOrEqual(10);
    expect(summary).toEqual([
      expect.stringMatching(/^rows read\s+6 {2}\(submitted_lines 5: not blank\)$/),
      expect.stringMatching(/^kept \(to check\)\s+3$/),
      expect.stringMatching(/^invalid_cnt\s+1$/),
      expect.stringMatching(/^duplicate_cnt\s+1$/),
      expect.stringMatching(/^blank\s+1$/),
    ]);
  });

  it("shows money exact to the micro, at least cents, with thousands separators", async () => {
    const e = await sandbox({ balanceMicros: 1_196_399_000 });
    expect((await e.run(["balance"])).stdout).toBe("$1,196.399 (1196399000 micros)\n");
    const plan = await e.run(submitArgs(e.file("list.txt", listText(500)), "--dry-run"));
    expect(plan.stderr).toContain("reservation $0.50 at $0.001 per number");
  });
});

describe("JSON scripts can trust", () => {
  it("gives each submitted task with replayed and the local preparation summary", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", [...gbList(500), "12345", "+33 6 12 34 56 78"].join("\n") + "\n");
    const first = await e.run(submitArgs(list, "--json"));
    expect(first.code, first.stderr).toBe(0);
    const [task] = lines(first.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(task).toMatchObject({ id: expect.stringMatching(TASK_ID), status: "processing", invalid_cnt: 0, replayed: false });
    expect(task!.preparation).toMatchObject({ rows_read: 502, kept: 500, invalid_cnt: 1, other_country_cnt: 1 });
    // The next run (checking again: --max-age 0) has a new task; its first answer is lost, so the task comes back on the
    // retry with the same key: replayed.
    e.sandbox.scriptFaults([{ route: "submit", fault: "drop-after-commit" }]);
    const [again] = lines((await e.run(submitArgs(list, "--json", "--max-age", "0"))).stdout).map(
      (line) => JSON.parse(line) as Record<string, unknown>,
    );
    expect(again).toMatchObject({ type: "task", id: expect.stringMatching(TASK_ID), replayed: true });
    expect(again!.id).not.toBe(task!.id);
    expect(e.state().tasks).toHaveLength(2);
  });

  it("names every key bulkcheck invents in snake_case", async () => {
    const e = await sandbox();
    const out = await e.run(["validate", e.file("list.csv", crm(5)), "--country", "GB", "--json"]);
    const keys = (value: unknown): string[] =>
      typeof value === "object" && value !== null
        ? Object.entries(value).flatMap(([key, inner]) => (key === "shared_code_regions" ? [key] : [key, ...keys(inner)]))
        : [];
    const summary = JSON.parse(out.stdout) as { column: unknown; format: unknown };
    expect(summary.column).toMatchObject({ chosen_by: "header" });
    expect(summary.format).toMatchObject({ has_header: true });
    for (const key of keys(summary)) expect(key).toMatch(/^[a-z0-9_]+$/);
  });
});

describe("join columns never collide", () => {
  it("prefixes every added column with bc_ when the source has a column of the same name, and says so", async () => {
    const e = await sandbox({ minTaskSize: 1 });
    await allowSmallTasks(e);
    const source = e.file("crm.csv", ["phone,carrier,Identifier", ...gbList(5).map((n) => `${n},mine,x`)].join("\n") + "\n");
    const id = (await e.run(["submit", source, "--type", "carrier_batch", "--country", "GB", "--yes"])).stdout.trim();
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    const out = await e.run(["download", id, "--join", source, "-o", "joined.csv", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    const added = ["identifier", "carrier", "underlying_carrier", "number_type", "country_code", "region", "city", "bulkcheck_status"];
    const [header] = parseDelimited(readFileSync(join(e.dir, "joined.csv"), "utf8"));
    // When each row was checked comes last, already prefixed.
    expect(header).toEqual(["phone", "carrier", "Identifier", ...added.map((name) => `bc_${name}`), "bc_checked_at"]);
    expect(out.stderr).toContain("every added column starts with bc_");
    expect(JSON.parse(out.stdout)).toMatchObject({ added_columns: [...added.map((name) => `bc_${name}`), "bc_checked_at"] });
  });
});

describe("a merged download", () => {
  it("counts in its summary exactly the rows in the file", async () => {
    const e = await sandbox({ noResultRate: 0.2, minTaskSize: 1 });
    await allowSmallTasks(e, 300);
    const ids = lines((await e.run(submitArgs(e.file("list.txt", listText(900))))).stdout);
    expect(ids).toHaveLength(3);
    expect((await e.run(["wait", ...ids, "--interval", "0.2", "--quiet"])).code).toBe(0);
    const out = await e.run(["download", ...ids, "-o", "merged.csv", "--json"]);
    const rows = lines(readFileSync(join(e.dir, "merged.csv"), "utf8")).length - 1;
    const summary = JSON.parse(out.stdout) as { rows_written: number; checked: number; no_result: number };
    expect(summary).toMatchObject({ rows_written: rows, checked: rows, no_result: 900 - rows });
    expect(out.stderr).toContain(`Checked ${rows}, no result ${900 - rows}.`);
  });
});

describe("progress where it takes time", () => {
  it("counts rows read on a terminal while preparing, and nothing when piped or quiet", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(20_000));
    const tty = await e.run(["validate", list, "--country", "GB"], { tty: true });
    expect(tty.stderr).toMatch(/preparing the list: [\d,]+ rows read/);
    // Piped, in CI, and on a terminal that reports no width (a pseudo-terminal without a window size).
    for (const options of [{}, { tty: true, env: { CI: "1" } }, { tty: true, columns: 0 }]) {
      expect((await e.run(["validate", list, "--country", "GB"], options)).stderr).not.toContain("rows read (");
    }
    expect((await e.run(["validate", list, "--country", "GB", "--quiet"], { tty: true })).stderr).toBe("");
  });

  it("shows the next check's countdown while waiting on a terminal", async () => {
    const e = await sandbox({ numbersPerSecond: 100 });
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const out = await e.run(["wait", id, "--interval", "5"], { tty: true });
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/0 of 1 task finished; 0 of 500 numbers checked; \d+ s elapsed; next check in [56] s/);
  });
});

/**
 * Issue 30: progress that moves. The sandbox checks 2 numbers a second on the e2e clock, which the
 * command's own sleeps move, so these runs take no real time and every figure is known.
 */
describe("progress that moves", () => {
  /** A sandbox checking 2 numbers a second, with tasks of at most 10 numbers. */
  async function slowSandbox(): Promise<E2e> {
    const e = await sandbox({ minTaskSize: 1, numbersPerSecond: 2 });
    await allowSmallTasks(e, 10);
    return e;
  }
  const carrierSubmit = (list: string, ...extra: string[]) => submitAs(list, "carrier_batch", "GB", "--yes", ...extra);
  const carrierWait = (list: string) => carrierSubmit(list, "--wait", "--interval", "1");

  it("submit --wait on a terminal: the clock moves, then tasks finished, numbers checked and an estimate once one has finished", async () => {
    const e = await slowSandbox();
    // 25 numbers in parts of 9, 8 and 8: the 8s finish a second before the 9.
    const out = await e.run(carrierWait(e.file("list.txt", listText(25))), { tty: true });
    expect(out.code, out.stderr).toBe(0);
    const shown = spinnerTexts(out.stderr);
    expect(shown).toContain("3 of 3 parts uploaded (3 processing, 0 finished); 0 of 25 numbers checked; 2 s elapsed");
    expect(shown).toContain("3 of 3 parts uploaded (3 processing, 0 finished); 0 of 25 numbers checked; 4 s elapsed");
    const estimate =
      /^3 of 3 parts uploaded \(\d processing, [12] finished\); (8|9|16|17) of 25 numbers checked; \d+ s elapsed, about \d+ s left$/;
    expect(shown.some((text) => estimate.test(text))).toBe(true);
    expect(shown.at(-1)).toMatch(/^3 of 3 parts uploaded \(0 processing, 3 finished\); 25 of 25 numbers checked; \d+ s elapsed$/);
  });

  it("submit --wait without a terminal: one line per change of the counts, none for the clock alone", async () => {
    const e = await slowSandbox();
    const out = await e.run(carrierWait(e.file("list.txt", listText(25))));
    expect(out.code, out.stderr).toBe(0);
    const tallies = lines(out.stderr).filter((line) => line.includes("parts uploaded"));
    const heads = tallies.map((line) => line.replace(/; \d+ s elapsed.*$/, ""));
    expect(new Set(heads).size).toBe(heads.length);
    expect(heads.at(-1)).toBe("3 of 3 parts uploaded (0 processing, 3 finished); 25 of 25 numbers checked");
    expect(tallies.find((line) => line.includes("1 finished"))).toMatch(/\d+ s elapsed, about \d+ s left$/);
  });

  it("wait of several tasks, on a terminal and without one: tasks finished of all, numbers checked of all, elapsed and an estimate", async () => {
    const e = await slowSandbox();
    /** A task of 4 numbers and one of 10, submitted without waiting. */
    const twoTasks = async (offset: number) => {
      const ids: string[] = [];
      for (const size of [4, 10]) {
        const out = await e.run(carrierSubmit(e.file(`list-${offset + size}.txt`, listText(size, offset + size * 10)), "--quiet"));
        ids.push(out.stdout.trim());
      }
      return ids;
    };
    const tty = await e.run(["wait", ...(await twoTasks(0)), "--interval", "1"], { tty: true });
    expect(tty.code, tty.stderr).toBe(0);
    const shown = spinnerTexts(tty.stderr);
    expect(shown.some((text) => /^0 of 2 tasks finished; 0 of 14 numbers checked; \d+ s elapsed(; next check in 1 s)?$/.test(text))).toBe(
      true,
    );
    expect(shown.some((text) => /^1 of 2 tasks finished; 4 of 14 numbers checked; \d+ s elapsed, about \d+ s left/.test(text))).toBe(true);
    expect(shown.at(-1)).toMatch(/^2 of 2 tasks finished; 14 of 14 numbers checked; \d+ s elapsed$/);

    const piped = await e.run(["wait", ...(await twoTasks(1000)), "--interval", "1"]);
    expect(piped.code, piped.stderr).toBe(0);
    const tallies = lines(piped.stderr).filter((line) => line.includes("tasks finished"));
    expect(tallies).toHaveLength(2);
    expect(tallies[0]).toMatch(/^1 of 2 tasks finished; 4 of 14 numbers checked; \d+ s elapsed, about \d+ s left$/);
    expect(tallies[1]).toMatch(/^2 of 2 tasks finished; 14 of 14 numbers checked; \d+ s elapsed$/);
  });
});

/** The texts a spinner drew, in order (each frame's text after its braille dot), without repeats in a row. */
function spinnerTexts(stderr: string): string[] {
  // eslint-disable-next-line no-control-regex -- the spinner's own escape codes are what it reads past
  const frames = [...stderr.matchAll(/[\u2800-\u28ff] ([^\u001b\n]+)/gu)].map((match) => match[1]!.trim());
  return frames.filter((text, index) => text !== frames[index - 1]);
}

describe("progress at a terminal", () => {
  it("leaves no spinner frame on a line printed while it spins, such as Task … submitted", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 1000 });
    const list = e.file("list.txt", listText(1500));
    const argv = [...submitArgs(list, "--wait", "--interval", "0.2", "-o", "out.csv")];
    // A pseudo-terminal with a width: without one no spinner is drawn.
    const session = startInTerminal(`stty cols 120 rows 40; exec ${bulkcheckCommand(argv)}`, { env: e.env, cwd: e.dir });
    const { code, screen } = await session.done;
    expect(code, screen).toBe(0);
    const shown = renderScreen(screen);
    const [id] = e.state().tasks.map((task) => task.id);
    expect(shown).toContain(`Task ${id} submitted.`);
    expect(shown).toContain(`task ${id} success: 1,500 checked, 0 without result`);
    // The spinner ran (its frames are braille dots) and none of its frames stayed on a line.
    // eslint-disable-next-line no-control-regex -- colour escapes are what it drops
    expect(screen.replace(/\u001b\[[\d;]*m/g, "")).toMatch(/[\u2800-\u28ff] \d of 1 part uploaded/u);
    expect(shown.filter((line) => /[\u2800-\u28ff]/u.test(line))).toEqual([]);
  });
});

/** Issue 34: a question at a terminal stays on screen until it is answered; no progress line is drawn over it. */
describe("a question at a terminal", () => {
  /** Erasing in the line or below it, as a spinner does before each frame (ESC[0K after ESC[1G). */
  // eslint-disable-next-line no-control-regex -- the terminal's own sequences are what it finds
  const ERASE = /\u001b\[\d*[KJ]/u;
  const question = "Reserve $0.30 of $10.00? [y/N] ";

  it.each([
    ["y", 0],
    ["n", 130],
  ])(
    "keeps Reserve …? on a 160×40 terminal, nothing erased after it until the answer %s, which the run then follows",
    async (answer, exit) => {
      const e = await sandbox({ fakeClock: false, minTaskSize: 1 });
      await allowSmallTasks(e);
      const argv = submitAs(e.file("list.txt", listText(300)), "carrier_batch", "GB", "--wait", "--interval", "0.2");
      const session = startInTerminal(`stty cols 160 rows 40; exec ${bulkcheckCommand(argv)}`, { env: e.env, cwd: e.dir });
      await until(() => session.screen().includes(question));
      // Long enough for a spinner's frames (every 80 ms) and its clock (every second) to be drawn over the question, were one turning.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const asked = session.screen();
      expect(asked.slice(asked.lastIndexOf(question) + question.length)).not.toMatch(ERASE);
      expect(renderScreen(asked).at(-1)).toBe(question.trimEnd());
      session.type(`${answer}\r`);
      const { code, screen } = await session.done;
      expect(code, screen).toBe(exit);
      const shown = renderScreen(screen);
      expect(shown).toContain(question + answer);
      if (answer === "y") {
        // Progress went on once the question was answered, below it.
        const [task] = e.state().tasks;
        expect(shown.slice(shown.indexOf(question + answer))).toContain(`task ${task!.id} success: 300 checked, 0 without result`);
        // eslint-disable-next-line no-control-regex -- colour escapes are what it drops
        expect(screen.slice(screen.lastIndexOf(question)).replace(/\u001b\[[\d;]*m/g, "")).toMatch(
          /[\u2800-\u28ff] \d of 1 part uploaded/u,
        );
      } else {
        expect(shown.at(-1)).toBe("error: Cancelled; nothing was uploaded.");
        expect(e.state().tasks).toEqual([]);
      }
    },
  );
});

describe("a spinner never outlives its command", () => {
  it("ends a submit whose list cannot be read, its preparation spinner stopped", async () => {
    const e = await sandbox();
    const argv = submitArgs(join(e.dir, "no-such-list.csv"), "--wait");
    const { code, screen } = await startInTerminal(`stty cols 120 rows 40; exec ${bulkcheckCommand(argv)}`, { env: e.env, cwd: e.dir })
      .done;
    expect(code, screen).toBe(2);
    expect(renderScreen(screen)).toContain("Check the path of the list file.");
  });
});

describe("the sandbox at a terminal", () => {
  it("logs requests in the foreground and says Ctrl-C stops it", async () => {
    const e = await sandbox();
    const session = startInTerminal(`exec ${bulkcheckCommand(["sandbox", "--port", "0", "--api-key", API_KEY])}`, { env: {}, cwd: e.dir });
    await until(() => session.screen().includes("Stop with"));
    expect(session.screen()).toContain("Stop with Ctrl-C.");
    const url = /listening on (http:\/\/\S+)/.exec(session.screen())![1]!;
    const balance = await e.bin(["balance"], { env: { BULKCHECK_BASE_URL: url } });
    expect(balance.code).toBe(0);
    await until(() => session.screen().includes("GET /api/v1/balance"));
    session.type("\u0003");
    expect((await session.done).code).toBe(0);
  });

  it("started with & in an interactive shell, writes nothing into it and says how to stop it", async () => {
    const e = await sandbox();
    const script = [
      "set -m", // job control, as in an interactive shell: the job gets its own process group
      `${bulkcheckCommand(["sandbox", "--json", "--port", "0", "--api-key", API_KEY])} > url.json &`,
      "until grep -q base_url url.json 2>/dev/null; do sleep 0.1; done",
      `BULKCHECK_BASE_URL=$(sed 's/.*"base_url":"\\([^"]*\\)".*/\\1/' url.json) ${bulkcheckCommand(["balance"])}`,
      "sleep 1.5; kill %1; wait",
    ].join("\n");
    const session = startInTerminal(`bash --norc -c '${script.replace(/'/g, `'\\''`)}'`, { env: e.env, cwd: e.dir });
    const { screen } = await session.done;
    expect(screen).toContain("$10.00 (10000000 micros)");
    expect(screen).toMatch(/Stop with: kill \d+/);
    expect(screen).not.toContain("GET /api/v1/balance");
  });
});

async function until(condition: () => boolean, limitMs = 15_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > limitMs) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
