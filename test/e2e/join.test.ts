import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JoinStatus } from "../../src/outputs/join-rows.js";
import { tempDir } from "../helpers/cli.js";
import { allowSmallTasks, checkedAtByTask, delimitedText, expectedResult, inOrder, parseDelimited } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, identifier, lines, submitArgs, submittedIds, TASK_ID, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();
const PRODUCT = "number_validation_batch";
/** High enough that a 30-number list has numbers without a result. */
const NO_RESULT_RATE = 0.3;
const RESULT_COLUMNS = ["identifier", "activated", "bulkcheck_status", "bc_checked_at"];

/** What a source row is, as a person reading the list would say. */
type Kind = { cls: "blank" | "invalid" | "other_country" } | { id: string; national?: boolean; region?: "JE" | "GG" };

interface SourceRow {
  fields: string[];
  kind: Kind;
}

/** "+44 7400 102000" as a person in the UK writes it: "07400 102000". */
function national(number: string): string {
  return "0" + number.replace(/^\+44 /, "");
}

/**
 * The messy CRM export: quoted commas and quotes, line breaks inside fields,
 * national and international forms of the same numbers, duplicates, blanks,
 * invalid and foreign numbers, Jersey and Guernsey, then thirty ordinary rows
 * (every other one in national format) and a repeat of a number without a result.
 */
function messyRows(): SourceRow[] {
  const rows: SourceRow[] = [
    { fields: ["1", "Smith, John", "+44 7400 123456", 'likes "quotes", and commas'], kind: { id: "447400123456" } },
    { fields: ["2", "Multi\nline name", "07400 123457", "note\r\nwith a CRLF inside"], kind: { id: "447400123457", national: true } },
    { fields: ["3", "Repeat of 1, national", "07400 123456", ""], kind: { id: "447400123456", national: true } },
    { fields: ["4", "No phone", "", ""], kind: { cls: "blank" } },
    { fields: ["5", "Spaces only", "   ", "edge spaces "], kind: { cls: "blank" } },
    { fields: ["6", "Too short", "12345", ""], kind: { cls: "invalid" } },
    { fields: ["7", "Words", "n/a", ""], kind: { cls: "invalid" } },
    { fields: ["8", "Paris", "+33 6 12 34 56 78", ""], kind: { cls: "other_country" } },
    { fields: ["9", "Jersey", "+44 7797 123456", ""], kind: { id: "447797123456", region: "JE" } },
    { fields: ["10", "Guernsey", "07781 123456", ""], kind: { id: "447781123456", national: true, region: "GG" } },
    { fields: ["11", "International prefix", "0044 7400 123458", ""], kind: { id: "447400123458" } },
    { fields: ["12", "Repeat of 11", "+447400123458", ""], kind: { id: "447400123458" } },
    { fields: ["13", "Dashes", "+44-7400-123459", "ünïcødé ✓"], kind: { id: "447400123459" } },
  ];
  gbList(30, 2000).forEach((number, i) => {
    const asNational = i % 2 === 0;
    rows.push({
      fields: [String(100 + i), `Row ${i}`, asNational ? national(number) : number, ""],
      kind: { id: identifier(number), national: asNational },
    });
  });
  const miss = gbList(30, 2000).find(
    (number, i) => i % 2 === 1 && expectedResult(PRODUCT, identifier(number), NO_RESULT_RATE) === undefined,
  );
  if (!miss) throw new Error("the fixture needs an international number without a result");
  rows.push({ fields: ["999", "Repeat of a number without a result", miss.replace(/ /g, ""), ""], kind: { id: identifier(miss) } });
  return rows;
}

interface Flags {
  requireCountryCode?: boolean;
  strictRegion?: boolean;
}

/** [identifier, activated, bulkcheck_status] each row must get, computed from the annotations and the sandbox's own result values. */
function expectedTails(rows: readonly SourceRow[], flags: Flags = {}): string[][] {
  const first = new Map<string, readonly string[]>();
  return rows.map(({ kind }) => {
    if ("cls" in kind) return ["", "", kind.cls];
    if (flags.requireCountryCode && kind.national) return ["", "", "no_code"];
    if (flags.strictRegion && kind.region) return ["", "", "other_country"];
    const seen = first.get(kind.id);
    if (seen) return [kind.id, ...seen, "duplicate"];
    const result = expectedResult(PRODUCT, kind.id, NO_RESULT_RATE);
    first.set(kind.id, result ?? [""]);
    return result ? [kind.id, ...result, "checked"] : [kind.id, "", "no_result"];
  });
}

function countStatuses(tails: readonly string[][]): Partial<Record<JoinStatus, number>> {
  const counts: Partial<Record<JoinStatus, number>> = {};
  for (const tail of tails) {
    const status = tail[tail.length - 1] as JoinStatus;
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

async function smallTaskSandbox(options: { maxTaskSize?: number } = {}): Promise<E2e> {
  const e = await sandbox({
    minTaskSize: 1,
    noResultRate: NO_RESULT_RATE,
    ...(options.maxTaskSize ? { maxTaskSize: options.maxTaskSize } : {}),
  });
  await allowSmallTasks(e, options.maxTaskSize);
  return e;
}

/** Submits and waits; returns the task ids (one per line on stdout). */
async function submitted(e: E2e, file: string, ...extra: string[]): Promise<string[]> {
  const out = await e.run(submitArgs(file, "--yes", "--quiet", ...extra));
  expect(out.code, out.stderr).toBe(0);
  const ids = lines(out.stdout);
  expect((await e.run(["wait", ...ids, "--interval", "0.2", "--quiet"])).code).toBe(0);
  return ids;
}

/**
 * The join's last column, bc_checked_at: on a row with a result, when the store says
 * its task was checked (one of `checkedAt`, the only one for a single task); empty on
 * a row without one.
 */
function expectCheckedAt(values: readonly string[], tails: readonly string[][], checkedAt: ReadonlyMap<string, string>): void {
  const times = new Set(checkedAt.values());
  expect(times.size).toBeGreaterThan(0);
  values.forEach((value, i) => {
    const hasResult = tails[i]![1] !== "";
    if (!hasResult) return expect(value, `bc_checked_at of source row ${i + 1}`).toBe("");
    expect(new Date(value).toISOString(), `bc_checked_at of source row ${i + 1}`).toBe(value);
    expect(times.has(value), `bc_checked_at ${value} of source row ${i + 1} is a task's checked_at`).toBe(true);
  });
}

/**
 * Checks a joined file against its source: same header then the result columns,
 * every source row in order with its fields unchanged (parsed by csv-parse) and
 * its text copied byte for byte, then the expected tail and when it was checked.
 */
function expectJoined(
  output: string,
  source: { text: string; records: string[] },
  header: string[],
  rows: readonly SourceRow[],
  tails: string[][],
  delimiter: string,
  checkedAt: ReadonlyMap<string, string>,
): void {
  const parsedSource = parseDelimited(source.text, delimiter);
  const parsedOutput = parseDelimited(output, delimiter);
  expect(parsedSource).toHaveLength(rows.length + 1);
  expect(parsedOutput).toHaveLength(parsedSource.length);
  expect(parsedOutput[0]).toEqual([...header, ...RESULT_COLUMNS]);
  parsedOutput.slice(1).forEach((row, i) => {
    expect(row.slice(0, header.length), `source row ${i + 1}`).toEqual(parsedSource[i + 1]);
    expect(row.slice(header.length, -1), `result columns of source row ${i + 1} (${rows[i]!.fields[2]})`).toEqual(tails[i]);
  });
  expectCheckedAt(
    parsedOutput.slice(1).map((row) => row.at(-1)!),
    tails,
    checkedAt,
  );
  expect(
    inOrder(
      output,
      source.records.map((record) => record + delimiter),
    ),
    "source records copied byte for byte",
  ).toBe(true);
}

const HEADER = ["id", "name", "phone", "notes"];

describe("download --join and submit --wait --join", () => {
  it.each([
    {
      dialect: "comma-separated with CRLF line ends, in one submit --wait --join command",
      delimiter: ",",
      eol: "\r\n",
      bom: false,
      name: "crm.csv",
      oneCommand: true,
    },
    { dialect: "semicolon-delimited with LF line ends", delimiter: ";", eol: "\n", bom: false, name: "export.csv", oneCommand: false },
    { dialect: "comma-separated with a UTF-8 BOM", delimiter: ",", eol: "\n", bom: true, name: "excel.csv", oneCommand: false },
    { dialect: "tab-separated (.tsv) with CRLF line ends", delimiter: "\t", eol: "\r\n", bom: false, name: "list.tsv", oneCommand: false },
  ])(
    "keeps every row of a messy $dialect list in order, untouched, with its status and result",
    async ({ delimiter, eol, bom, name, oneCommand }) => {
      const e = await smallTaskSandbox();
      const rows = messyRows();
      const source = delimitedText([HEADER, ...rows.map((row) => row.fields)], delimiter, eol);
      const file = e.file(name, (bom ? "\ufeff" : "") + source.text);
      let out;
      if (oneCommand) {
        out = await e.run(submitArgs(file, "--yes", "--wait", "--interval", "0.2", "--join", "-o", "joined.csv"));
      } else {
        const [id] = await submitted(e, file);
        out = await e.run(["download", id!, "--join", file, "-o", "joined.csv"]);
      }
      expect(out.code, out.stderr).toBe(0);
      const output = readFileSync(join(e.dir, "joined.csv"), "utf8");
      expect(output.startsWith("\ufeff")).toBe(bom);
      expect(output.endsWith(eol)).toBe(true);
      const tails = expectedTails(rows);
      expectJoined(output, source, HEADER, rows, tails, delimiter, await checkedAtByTask(e));
      // Every status of the issue appears (no_code needs --require-country-code: next test).
      const counts = countStatuses(tails);
      expect(Object.keys(counts).sort()).toEqual(["blank", "checked", "duplicate", "invalid", "no_result", "other_country"]);
      const summary = Object.entries(counts).map(([status, n]) => `${status} ${n}`);
      expect(out.stderr).toContain(`Wrote ${rows.length} source rows to joined.csv`);
      for (const part of summary) expect(out.stderr).toContain(part);
    },
  );

  it("marks national numbers no_code with --require-country-code and Jersey/Guernsey other_country with --strict-region", async () => {
    const e = await smallTaskSandbox();
    const rows = messyRows();
    const source = delimitedText([HEADER, ...rows.map((row) => row.fields)], ",", "\n");
    const file = e.file("crm.csv", source.text);
    const flags = { requireCountryCode: true, strictRegion: true };
    const [id] = await submitted(e, file, "--require-country-code", "--strict-region");
    const out = await e.run(["download", id!, "--join", file, "-o", "joined.csv", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    const tails = expectedTails(rows, flags);
    expectJoined(readFileSync(join(e.dir, "joined.csv"), "utf8"), source, HEADER, rows, tails, ",", await checkedAtByTask(e));
    const counts = countStatuses(tails);
    expect(counts.no_code).toBeGreaterThan(10);
    expect(JSON.parse(out.stdout)).toMatchObject({
      rows_written: rows.length,
      path: join(e.dir, "joined.csv"),
      by_status: { checked: 0, no_result: 0, invalid: 0, no_code: 0, other_country: 0, duplicate: 0, blank: 0, ...counts },
      checked: counts.checked ?? 0,
      no_result: counts.no_result ?? 0,
    });
    // The Jersey row is excluded, so the service never saw it.
    expect(e.state().tasks[0]!.submitted_lines).toBe((counts.checked ?? 0) + (counts.no_result ?? 0));
  });

  it("joins a plain .txt list, one number per line, under a phone header", async () => {
    const e = await smallTaskSandbox();
    const numbers = gbList(12, 3000);
    const listLines = [
      ...numbers.map((n, i) => (i % 3 === 0 ? national(n) : n)),
      "",
      "not a number",
      "+33 6 12 34 56 78",
      national(numbers[1]!),
      "+44 7797 123456",
    ];
    const file = e.file("numbers.txt", listLines.join("\n") + "\n");
    const [id] = await submitted(e, file);
    const out = await e.run(["download", id!, "--join", file, "-o", "joined.csv"]);
    expect(out.code, out.stderr).toBe(0);
    const parsed = parseDelimited(readFileSync(join(e.dir, "joined.csv"), "utf8"));
    expect(parsed[0]).toEqual(["phone", ...RESULT_COLUMNS]);
    expect(parsed.slice(1).map((row) => row[0])).toEqual(listLines);
    const status = (i: number) => parsed[i + 1]![3];
    const [checkedAt] = (await checkedAtByTask(e)).values();
    numbers.forEach((n, i) => {
      const result = expectedResult(PRODUCT, identifier(n), NO_RESULT_RATE);
      expect(parsed[i + 1]!.slice(1)).toEqual(
        result ? [identifier(n), ...result, "checked", checkedAt] : [identifier(n), "", "no_result", ""],
      );
    });
    const jersey = expectedResult(PRODUCT, "447797123456", NO_RESULT_RATE) ? "checked" : "no_result";
    expect([12, 13, 14, 15, 16].map(status)).toEqual(["blank", "invalid", "other_country", "duplicate", jersey]);
    // The repeat (national form of the second number) carries its first occurrence's result.
    expect(parsed[16]!.slice(1, 3)).toEqual(parsed[2]!.slice(1, 3));
  });

  it("joins the results of a list that was split into several tasks", async () => {
    const e = await smallTaskSandbox({ maxTaskSize: 15 });
    const rows = messyRows();
    const source = delimitedText([HEADER, ...rows.map((row) => row.fields)], ",", "\r\n");
    const file = e.file("crm.csv", source.text);
    const out = await e.run(submitArgs(file, "--yes", "--wait", "--interval", "0.2", "--join", "-o", "joined.csv"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe("");
    const ids = submittedIds(out.stderr);
    expect(ids.length).toBeGreaterThan(1);
    ids.forEach((id) => expect(id).toMatch(TASK_ID));
    expect(
      e
        .state()
        .tasks.map((task) => task.submitted_lines)
        .every((n) => n !== undefined && n <= 15),
    ).toBe(true);
    const output = readFileSync(join(e.dir, "joined.csv"), "utf8");
    expectJoined(output, source, HEADER, rows, expectedTails(rows), ",", await checkedAtByTask(e));
    // The same tasks named in another order give the same file.
    const again = await e.run(["download", ...[...ids].reverse(), "--join", file, "-o", "again.csv"]);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(e.dir, "again.csv"), "utf8")).toBe(output);
  });

  it("writes the joined rows to stdout without -o", async () => {
    const e = await smallTaskSandbox();
    const rows = messyRows();
    const source = delimitedText([HEADER, ...rows.map((row) => row.fields)], ",", "\n");
    const file = e.file("crm.csv", source.text);
    const [id] = await submitted(e, file);
    const out = await e.run(["download", id!, "--join", file]);
    expect(out.code, out.stderr).toBe(0);
    expectJoined(out.stdout, source, HEADER, rows, expectedTails(rows), ",", await checkedAtByTask(e));
    expect(out.stderr).toContain(`Wrote ${rows.length} source rows with the ${PRODUCT} columns`);
  });

  it("still joins every row when the result download breaks off midway", async () => {
    const e = await smallTaskSandbox();
    const rows = messyRows();
    const source = delimitedText([HEADER, ...rows.map((row) => row.fields)], ",", "\n");
    const file = e.file("crm.csv", source.text);
    const [id] = await submitted(e, file);
    e.sandbox.scriptFaults([{ route: "result", fault: "drop-mid-download" }]);
    const out = await e.run(["download", id!, "--join", file, "-o", "joined.csv"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("The download broke off");
    expect(e.state().stats.faults_injected["drop-mid-download"]).toBe(1);
    expectJoined(readFileSync(join(e.dir, "joined.csv"), "utf8"), source, HEADER, rows, expectedTails(rows), ",", await checkedAtByTask(e));
  });

  it("refuses to join a task this machine has no journal entry for (exit 2) and writes nothing", async () => {
    const e = await smallTaskSandbox();
    const file = e.file("crm.csv", delimitedText([HEADER, ...messyRows().map((row) => row.fields)], ",", "\n").text);
    const [id] = await submitted(e, file);
    const requestsBefore = e.state().stats.requests;
    const out = await e.run(["download", id!, "--join", file, "-o", "joined.csv"], {
      env: { BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-e2e-other-config-") },
    });
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`error: There is no local record of how task ${id} was prepared`);
    expect(out.stderr).toContain(`bulkcheck download ${id}`);
    expect(existsSync(join(e.dir, "joined.csv"))).toBe(false);
    expect(e.state().stats.requests).toBe(requestsBefore); // refused before any request
  });

  // BUG (src/cli/commands/download.ts → src/cli/actions/download.ts): the --join path
  // never calls checkDestination, which plain `download` runs before any request. So
  // `-o missing/joined.csv` fails after downloading with exit 1 "unexpected: ENOENT …
  // .joined.csv.bulkcheck-….tmp", and an existing -o FILE is refused (exit 2) only
  // after the check and result requests. Fix: call checkDestination(ctx, flags.output,
  // flags.force) in downloadAction before the join.
  it("refuses, before any request, a --join -o FILE that exists or whose directory does not (exit 2)", async () => {
    const e = await smallTaskSandbox();
    const file = e.file("crm.csv", delimitedText([HEADER, ...messyRows().map((row) => row.fields)], ",", "\n").text);
    const [id] = await submitted(e, file);
    e.file("joined.csv", "precious\n");
    const requestsBefore = e.state().stats.requests;
    const exists = await e.run(["download", id!, "--join", file, "-o", "joined.csv"]);
    expect(exists.code).toBe(2);
    expect(readFileSync(join(e.dir, "joined.csv"), "utf8")).toBe("precious\n");
    const noDir = await e.run(["download", id!, "--join", file, "-o", "missing/joined.csv"]);
    expect(noDir.code, noDir.stderr).toBe(2);
    expect(noDir.stderr).toContain("does not exist");
    expect(e.state().stats.requests).toBe(requestsBefore);
  });

  // BUG (src/outputs/join-rows.ts, joinResults): a row with fewer fields than the header
  // (a spreadsheet export that drops trailing empty cells) is written as its raw text
  // followed directly by the result columns, so `identifier` lands under `notes` and
  // `bulkcheck_status` under `activated`. The row should be padded with empty fields
  // up to the header's width before the result columns.
  it("lines up the result columns of a row with fewer fields than the header", async () => {
    const e = await smallTaskSandbox();
    const file = e.file("crm.csv", "id,name,phone,notes\n1,Full,+44 7400 123456,x\n2,Short,+44 7400 123457\n");
    const [id] = await submitted(e, file);
    const out = await e.run(["download", id!, "--join", file, "-o", "joined.csv"]);
    expect(out.code, out.stderr).toBe(0);
    const [header, full, short] = parseDelimited(readFileSync(join(e.dir, "joined.csv"), "utf8"));
    const column = (row: string[] | undefined, name: string) => row?.[header!.indexOf(name)];
    expect(column(full, "bulkcheck_status")).toBe("checked");
    expect(column(short, "identifier")).toBe("447400123457");
    expect(column(short, "bulkcheck_status")).toBe("checked");
  });

  // BUG (same place): an empty line inside a CSV is kept as a `blank` row (good) but
  // written as ",,,blank" — four fields under a seven-column header — so its status
  // sits under `notes`. Padding short rows (above) fixes this too.
  it("writes an empty line of a CSV as a blank row whose status is under bulkcheck_status", async () => {
    const e = await smallTaskSandbox();
    const file = e.file("crm.csv", "id,name,phone,notes\n1,A,+44 7400 123456,x\n\n2,B,+44 7400 123457,y\n");
    const [id] = await submitted(e, file);
    const out = await e.run(["download", id!, "--join", file, "-o", "joined.csv"]);
    expect(out.code, out.stderr).toBe(0);
    const [header, ...data] = parseDelimited(readFileSync(join(e.dir, "joined.csv"), "utf8"));
    const status = header!.indexOf("bulkcheck_status");
    expect(data.map((row) => row[status])).toEqual(["checked", "blank", "checked"]);
  });
});
