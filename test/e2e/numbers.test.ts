import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { runBin, runCli, tempDir } from "../helpers/cli.js";
import { allowSmallTasks, checkedAtByTask } from "../helpers/results-fixtures.js";
import { e2eSandboxes, lines, TASK_ID } from "../helpers/sandbox.js";
import { cp1252 } from "../helpers/windows-1252.js";

const sandbox = e2eSandboxes();
const LOCAL_ONLY = { env: { BULKCHECK_CONFIG_DIR: join(tempDir(), "config") } };

/**
 * A DE list: two ambiguous cells (+49 211 2345 or 04921 12345), and bare cells valid
 * only nationally (0151 2345 6000) or only with their code (+49 30 1234 5600).
 */
function deList(nationalVotes: number, internationalVotes: number): string {
  const national = Array.from({ length: nationalVotes }, (_, i) => `1512345${String(6000 + i)}`);
  const international = Array.from({ length: internationalVotes }, (_, i) => `49 30 1234${String(5600 + i)}`);
  return ["phone", "4921 12345", ...national, ...international, "4921 12345"].join("\n") + "\n";
}

function file(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

describe("validate on ambiguous digit strings", () => {
  it("reads them by the list's convention and reports it in --json, with the votes", async () => {
    const out = await runBin(["validate", file("de.txt", deList(3, 1)), "--country", "DE", "--json"], LOCAL_ONLY);
    expect(out.code, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout);
    expect(summary.ambiguous).toEqual({
      total: 2,
      international: 0,
      national: 2,
      resolved_by: "convention",
      votes: { international: 1, national: 3 },
    });
    expect(summary).toMatchObject({ kept: 5, duplicate_cnt: 1, spreadsheet_expanded: 0, encoding: "utf8", encoding_source: "detected" });
  });

  it("warns on stderr, naming the counts, when the list mixes conventions", async () => {
    const out = await runCli(["validate", file("de.txt", deList(3, 2)), "--country", "DE"], LOCAL_ONLY);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(
      "warning: the list mixes conventions: 2 cells read with their country code, 3 read nationally; 2 ambiguous rows were read nationally. Pass --digits-as to decide.",
    );
    expect(out.stderr).toMatch(/ambiguous\s+2: 0 international, 2 national \(by convention; votes 2 international, 3 national\)/);
    expect(out.stdout).toBe("");
  });

  it("does not warn when one convention clearly leads", async () => {
    const out = await runCli(["validate", file("de.txt", deList(4, 1)), "--country", "DE"], LOCAL_ONLY);
    expect(out.stderr).not.toContain("mixes conventions");
  });

  it("warns when a few nationally written cells decide more ambiguous rows than they are", async () => {
    const ambiguous = Array.from({ length: 6 }, () => "4921 12345");
    const list = ["phone", "15123456000", ...ambiguous].join("\n") + "\n";
    const out = await runCli(["validate", file("de.txt", list), "--country", "DE"], LOCAL_ONLY);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(
      "warning: 6 ambiguous rows were read nationally on the evidence of only 1 nationally written cells. Pass --digits-as to decide.",
    );
  });

  it("reads them as --digits-as says, and under --require-country-code a national reading is no_code", async () => {
    const path = file("de.txt", deList(3, 2));
    const upload = join(tempDir(), "upload.txt");
    const flag = await runCli(["validate", path, "--country", "DE", "--digits-as", "international", "-o", upload, "--json"], LOCAL_ONLY);
    expect(JSON.parse(flag.stdout).ambiguous).toMatchObject({ international: 2, national: 0, resolved_by: "flag" });
    expect(readFileSync(upload, "utf8").split("\n")[0]).toBe("492112345");
    expect(flag.stderr).not.toContain("mixes conventions");
    const strict = await runCli(
      ["validate", path, "--country", "DE", "--digits-as", "national", "--require-country-code", "--json"],
      LOCAL_ONLY,
    );
    expect(JSON.parse(strict.stdout)).toMatchObject({ kept: 2, no_code_cnt: 5 });
  });

  it("refuses a --digits-as it does not know with exit 2", async () => {
    const out = await runCli(["validate", file("de.txt", deList(1, 1)), "--country", "DE", "--digits-as", "local"], LOCAL_ONLY);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/international, national/);
  });
});

describe("validate on spreadsheet notation, encodings and --rejects -", () => {
  it("counts the spreadsheet cells it expanded and refuses those that lost digits", async () => {
    const list = file("xl.txt", "phone\n4.47400123456E+11\n4.47911E+11\n+44 7400 123457\n");
    const out = await runCli(["validate", list, "--country", "GB", "--json"], LOCAL_ONLY);
    expect(JSON.parse(out.stdout)).toMatchObject({ kept: 2, invalid_cnt: 1, spreadsheet_expanded: 1 });
    const human = await runCli(["validate", list, "--country", "GB"], LOCAL_ONLY);
    expect(human.stderr).toMatch(/spreadsheet_expanded\s+1/);
  });

  it("reads a Windows-1252 export, says so, and reads it as --encoding forces", async () => {
    const list = file("crm.csv", cp1252("name,phone\r\nMüller,07400 100001\r\nO’Neil,07400 100002\r\n"));
    const detected = await runBin(["validate", list, "--country", "GB"], LOCAL_ONLY);
    expect(detected.code, detected.stderr).toBe(0);
    expect(detected.stderr).toMatch(/^rows read\s+2 {2}\(encoding windows-1252, detected\)$/m);
    const forced = await runCli(["validate", list, "--country", "GB", "--encoding", "latin1", "--json"], LOCAL_ONLY);
    expect(JSON.parse(forced.stdout)).toMatchObject({ kept: 2, encoding: "latin1", encoding_source: "forced" });
    const utf8 = await runCli(["validate", list, "--country", "GB", "--encoding", "utf8"], LOCAL_ONLY);
    expect(utf8.code).toBe(3);
    expect(utf8.stderr).toContain("is not UTF-8 text (bad bytes on line 2)");
  });

  it("writes the rejects CSV to stdout with --rejects -, the summary staying on stderr", async () => {
    const list = file("list.txt", "phone\n07400 100001\nn/a\n+1 212 555 0142\n");
    const out = await runBin(["validate", list, "--country", "GB", "--rejects", "-"], LOCAL_ONLY);
    expect(out.code, out.stderr).toBe(0);
    expect(parse(out.stdout)).toEqual([
      ["line", "value", "class", "reason", "record"],
      ["3", "n/a", "invalid", "contains characters that are not part of a phone number", "2"],
      ["4", "+1 212 555 0142", "other_country", "number belongs to +1 (US), not GB", "3"],
    ]);
    expect(out.stderr).toMatch(/kept \(to check\)\s+1/);
  });

  it.each([
    ["-o -", ["-o", "-"]],
    ["--json", ["--json"]],
  ])("refuses --rejects - with %s, which also wants stdout, with exit 2", async (_name, extra) => {
    const out = await runCli(["validate", file("list.txt", "07400 100001\n"), "--country", "GB", "--rejects", "-", ...extra], LOCAL_ONLY);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("both want stdout");
  });
});

describe("submit and join with the new rules", () => {
  it("joins a Windows-1252 CRM export back byte for byte in its source columns, in Windows-1252", async () => {
    const e = await sandbox({ minTaskSize: 1, fakeClock: false });
    await allowSmallTasks(e);
    const rows = ["id;name;phone;note", "1;Müller;07400 100001;Crème brûlée", "2;José;+44 7400 100002;€ 5", "3;O’Neil;n/a;"];
    const source = cp1252(rows.join("\r\n") + "\r\n");
    const path = join(e.dir, "crm.csv");
    writeFileSync(path, source);
    const out = await e.bin([
      ...["submit", path, "--type", "number_validation_batch", "--country", "GB", "--yes"],
      ...["--wait", "--interval", "0.2", "--join", "-o", "joined.csv"],
    ]);
    expect(out.code, out.stderr).toBe(0);
    const joined = readFileSync(join(e.dir, "joined.csv"));
    const joinedLines = joined.toString("latin1").split("\r\n");
    rows.forEach((row, i) => expect(joinedLines[i]!.startsWith(cp1252(row).toString("latin1") + ";")).toBe(true));
    expect(joinedLines[0]).toBe("id;name;phone;note;identifier;activated;bulkcheck_status;bc_checked_at");
    // The checked rows end with when their task was checked; the invalid row was never checked.
    const [checkedAt] = (await checkedAtByTask(e)).values();
    expect(new Date(checkedAt!).toISOString()).toBe(checkedAt);
    expect([1, 2].map((i) => joinedLines[i]!.split(";").slice(-2))).toEqual([
      ["checked", checkedAt],
      ["checked", checkedAt],
    ]);
    expect(joinedLines[3]).toBe(cp1252("3;O’Neil;n/a;;;;invalid;").toString("latin1"));
  });

  it("joins a list whose ambiguous rows were read nationally with the identifiers it uploaded", async () => {
    const e = await sandbox({ minTaskSize: 1 });
    await allowSmallTasks(e);
    const path = e.file("de.txt", deList(3, 0));
    const submitted = await e.run(["submit", path, "--type", "number_validation_batch", "--country", "DE", "--yes", "--quiet", "--wait"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const [id] = lines(submitted.stdout);
    expect(id).toMatch(TASK_ID);
    const joined = await e.run(["download", id!, "--join", path, "-o", "joined.csv"]);
    expect(joined.code, joined.stderr).toBe(0);
    const table: string[][] = parse(readFileSync(join(e.dir, "joined.csv"), "utf8"));
    const checkedAt = (await checkedAtByTask(e)).get(id!)!;
    expect(table.map((row) => [row[0], row[1], row.at(-2), row.at(-1)])).toEqual([
      ["phone", "identifier", "bulkcheck_status", "bc_checked_at"],
      ["4921 12345", "49492112345", "checked", checkedAt],
      ["15123456000", "4915123456000", "checked", checkedAt],
      ["15123456001", "4915123456001", "checked", checkedAt],
      ["15123456002", "4915123456002", "checked", checkedAt],
      ["4921 12345", "49492112345", "duplicate", checkedAt],
    ]);
  });

  it("sends task ids to stderr when the rejects go to stdout", async () => {
    const e = await sandbox({ minTaskSize: 1 });
    await allowSmallTasks(e);
    const path = e.file("list.txt", "phone\n07400 100001\nn/a\n");
    const out = await e.run(["submit", path, "--type", "number_validation_batch", "--country", "GB", "--yes", "--rejects", "-"]);
    expect(out.code, out.stderr).toBe(0);
    expect(parse(out.stdout)).toEqual([
      ["line", "value", "class", "reason", "record"],
      ["3", "n/a", "invalid", "contains characters that are not part of a phone number", "2"],
    ]);
    expect(out.stderr).toMatch(/Task [0-9a-f]{32} submitted/);
  });
});

describe("numbers without a country code where no country reads them", () => {
  /** A carrier list mostly of GB numbers, half of them written nationally, and two US numbers. */
  const GB_WITH_CODE = Array.from({ length: 12 }, (_, i) => `+44 7400 ${100_000 + i}`);
  const GB_NATIONAL = Array.from({ length: 10 }, (_, i) => `07500 ${200_000 + i}`);
  const US = ["+1 212 736 0100", "+1 212 736 0101"];
  const list = () => file("carrier.txt", [...GB_WITH_CODE, ...GB_NATIONAL, ...US].join("\n") + "\n");

  it("hints that --country GB keeps them, naming GB because most numbers with a code are GB's", async () => {
    const path = list();
    const out = await runBin(["validate", path, "--type", "carrier_batch"], LOCAL_ONLY);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(/^no_code_cnt +10$/m);
    expect(out.stderr).toContain(
      "10 of 24 numbers have no country code, so they are excluded (no_code). 12 of the 14 numbers written with a code are GB's: " +
        "--country GB would read the 10 as GB numbers and keep them (the 2 of other countries would then be excluded as other_country).",
    );
    // And it would: the ten are kept, the two US numbers are then another country's.
    const withCountry = await runBin(["validate", path, "--type", "carrier_batch", "--country", "GB", "--json"], LOCAL_ONLY);
    expect(JSON.parse(withCountry.stdout)).toMatchObject({ kept: 22, no_code_cnt: 0, other_country_cnt: 2 });
    expect(withCountry.stderr).not.toContain("no country code");
  });

  it("gives the same hint before a carrier_batch submit, and --default-country for --country auto", async () => {
    const e = await sandbox({ minTaskSize: 1, fakeClock: false });
    await allowSmallTasks(e);
    const path = list();
    const carrier = await e.bin(["submit", path, "--type", "carrier_batch", "--dry-run"]);
    expect(carrier.code, carrier.stderr).toBe(0);
    expect(carrier.stderr).toContain("--country GB would read the 10 as GB numbers and keep them (the 2 of other countries");
    const auto = await e.bin(["submit", path, "--type", "number_activity_batch", "--country", "auto", "--dry-run"]);
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stderr).toContain("--default-country GB would read the 10 as GB numbers and keep them.");
  });

  it("names no country when the numbers with a code are of many, and says nothing when few lack one", async () => {
    const mixed = file("mixed.txt", [...GB_WITH_CODE.slice(0, 3), ...US, "+33 6 12 34 56 78", ...GB_NATIONAL].join("\n") + "\n");
    const out = await runBin(["validate", mixed, "--type", "carrier_batch"], LOCAL_ONLY);
    expect(out.stderr).toContain("If they are of one country, --country CC reads them as its numbers and keeps them.");
    const few = file("few.txt", [...Array.from({ length: 40 }, (_, i) => `+44 7400 ${300_000 + i}`), GB_NATIONAL[0]].join("\n") + "\n");
    const quiet = await runBin(["validate", few, "--type", "carrier_batch"], LOCAL_ONLY);
    expect(quiet.stderr).toMatch(/^no_code_cnt +1$/m);
    expect(quiet.stderr).not.toContain("no country code");
  });
});
