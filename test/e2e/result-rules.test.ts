import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { allowSmallTasks, oneTaskService, tamperingProxy, type Tampering } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, identifier, lines, submitArgs, submittedIds, type E2e } from "../helpers/sandbox.js";

/**
 * Issue 18, point 11: one set of rules decides what a result file may contain
 * (src/results/result-rules.ts), and a result that breaks one is refused with exit 3,
 * saying what the service sent, and nothing is written from it.
 */
const sandbox = e2eSandboxes();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A sandbox for small tasks (real clock: the binary is spawned) behind a proxy that tampers with what it sends. */
async function tampered(tamper: Tampering, options: { noResultRate?: number } = {}) {
  const e = await sandbox({ minTaskSize: 1, fakeClock: false, ...options });
  await allowSmallTasks(e);
  const proxy = await tamperingProxy(e.sandbox.url, tamper);
  closers.push(() => proxy.close());
  const env = { env: { BULKCHECK_BASE_URL: proxy.url } };
  return { e, bin: (argv: string[]) => e.bin(argv, env) };
}

/** Identifiers of GB numbers that no test list holds. */
const foreign = (count: number): string[] => Array.from({ length: count }, (_, i) => String(447_700_900_000 + i));

/** A CRM export of `count` numbers: an id column, a name, and the phone, some written nationally. */
function crmCsv(e: E2e, count: number): string {
  const rows = gbList(count).map((number, i) => `${i + 1},Customer ${i},${i % 2 ? "0" + number.slice(4) : number}`);
  return e.file("crm.csv", ["id,name,phone", ...rows].join("\n") + "\n");
}

const WAIT_TO_FILE = ["--wait", "--interval", "0.2", "-o", "out.csv"];

describe("what a result file may contain", () => {
  it("refuses a result of 200 rows, with success_cnt 200, for 20 numbers uploaded: exit 3 and nothing written, with download --strict too", async () => {
    const { e, bin } = await tampered({
      task: (task) => ({ ...task, success_cnt: 200 }),
      result: (csv) =>
        csv +
        foreign(180)
          .map((id) => `${id},true\n`)
          .join(""),
    });
    const out = await bin(submitArgs(crmCsv(e, 20), ...WAIT_TO_FILE));
    expect(out.code, out.stderr).toBe(3);
    const [id] = submittedIds(out.stderr);
    expect(out.stderr).toContain(
      `Task ${id} reports success_cnt 200 and failure_cnt 0 for a total of 20 numbers: more numbers than the task has. Its result was not read.`,
    );
    expect(out.stderr).toContain("Nothing was written. Note the task id and report the result file to the service.");
    expect(out.stderr).not.toContain("Charged");
    expect(existsSync(join(e.dir, "out.csv"))).toBe(false);

    for (const strict of [[], ["--strict"]]) {
      const download = await bin(["download", id!, "-o", "download.csv", ...strict]);
      expect(download.code, download.stderr).toBe(3);
      expect(download.stderr).toContain(`Task ${id} reports success_cnt 200`);
      expect(existsSync(join(e.dir, "download.csv"))).toBe(false);
    }
  });

  it("refuses rows for numbers never uploaded wherever those numbers are known (submit --wait, a join, retry-failed); download ID alone cannot tell", async () => {
    // Five of the task's rows carry numbers that were never uploaded: as many rows as the task has, each a valid identifier once.
    const strangers = foreign(5);
    const { e, bin } = await tampered(
      {
        result: (csv) => {
          const [header, ...rows] = lines(csv);
          return [header, ...rows.map((row, i) => (i < strangers.length ? row.replace(/^\d+/, strangers[i]!) : row))].join("\n") + "\n";
        },
      },
      { noResultRate: 0.3 },
    );
    const list = crmCsv(e, 20);
    const submitted = await bin(submitArgs(list, ...WAIT_TO_FILE));
    expect(submitted.code, submitted.stderr).toBe(3);
    const [id] = submittedIds(submitted.stderr);
    expect(submitted.stderr).toContain(
      `In the result of task ${id}, data row 1 has the identifier ${strangers[0]}, which was not uploaded to that task.`,
    );
    expect(existsSync(join(e.dir, "out.csv"))).toBe(false);

    const joined = await bin(["download", id!, "--join", list, "-o", "joined.csv"]);
    expect(joined.code, joined.stderr).toBe(3);
    expect(joined.stderr).toMatch(
      new RegExp(
        `5 of the \\d+ rows in the result of task ${id} have an identifier that is none of the numbers uploaded from .*crm\\.csv \\(the first: ${strangers[0]}\\)`,
      ),
    );
    expect(existsSync(join(e.dir, "joined.csv"))).toBe(false);

    const retry = await bin(["retry-failed", id!, "--dry-run"]);
    expect(retry.code, retry.stderr).toBe(3);
    expect(retry.stderr).toContain(`data row 1 has the identifier ${strangers[0]}, which was not uploaded to that task.`);

    // Only the task is known to a plain download: the rules that need no list hold, so it is written (docs/results.md says so).
    const plain = await bin(["download", id!, "-o", "plain.csv"]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(readFileSync(join(e.dir, "plain.csv"), "utf8")).toContain(`${strangers[0]},`);
  });
});

describe("the rules that need no list, on download ID", () => {
  const ROWS = ["447400100001,true", "447400100002,false"];
  it.each([
    [
      "more rows than the task has numbers",
      { total: 2, success_cnt: 2 },
      [...ROWS, "447400100003,true"],
      "has more than 2 rows, although the task has 2 numbers",
    ],
    [
      "success_cnt and failure_cnt above total",
      { total: 2, success_cnt: 2, failure_cnt: 1 },
      ROWS,
      "reports success_cnt 2 and failure_cnt 1 for a total of 2 numbers",
    ],
    [
      "an identifier with a plus",
      { total: 2, success_cnt: 2 },
      ["+447400100001,true", ROWS[1]!],
      'data row 1 has the identifier "+447400100001"',
    ],
    [
      "a formula as identifier",
      { total: 2, success_cnt: 2 },
      [ROWS[0]!, '"=HYPERLINK(""http://evil"",""x"")",true'],
      'data row 2 has the identifier "=HYPERLINK(\\"http://evil\\",\\"x\\")"',
    ],
    [
      "an identifier of 16 digits",
      { total: 2, success_cnt: 2 },
      ["4474001000011234,true", ROWS[1]!],
      'has the identifier "4474001000011234"',
    ],
    [
      "a repeated identifier",
      { total: 2, success_cnt: 2 },
      [ROWS[0]!, ROWS[0]!],
      "the identifier 447400100001 has 2 rows; a task has one row per number",
    ],
  ])("refuses %s: exit 3, naming the task, and writes nothing", async (_what, task, rows, message) => {
    const service = await oneTaskService({ body: ["identifier,activated", ...rows].join("\n") + "\n", contentType: "text/csv", task });
    closers.push(service.close);
    const e = await sandbox();
    const out = await e.run(["download", service.id, "-o", "out.csv"], { env: { BULKCHECK_BASE_URL: service.url } });
    expect(out.code, out.stderr).toBe(3);
    expect(out.stderr).toContain(service.id);
    expect(out.stderr).toContain(message);
    expect(existsSync(join(e.dir, "out.csv"))).toBe(false);
  });

  it("still writes a result with fewer rows than success_cnt, warning, and --strict fails it as before", async () => {
    const service = await oneTaskService({
      body: `identifier,activated\n${identifier("+44 7400 100001")},true\n`,
      contentType: "text/csv",
    });
    closers.push(service.close);
    const e = await sandbox();
    const out = await e.run(["download", service.id, "-o", "out.csv"], { env: { BULKCHECK_BASE_URL: service.url } });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("has 1 rows; 3 were expected");
    const strict = await e.run(["download", service.id, "-o", "strict.csv", "--strict"], { env: { BULKCHECK_BASE_URL: service.url } });
    expect(strict.code).not.toBe(0);
    expect(strict.code).not.toBe(3);
  });
});
