import { chooseIdColumn } from "../../src/prepare/column.js";
import { lstat, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { InputRejectedError, UsageError } from "../../src/errors.js";
import { prepareList } from "../../src/prepare/index.js";
import { DestinationIsSourceError } from "../../src/results/errors.js";
import { listFile, prepare, prepareText, tempDir } from "./helpers.js";

const CONTACTS = [
  "id,name,phone,notes",
  '1,"Smith, Amy",+44 7400 100001,"call after 5pm, ask for ""Bob"""',
  "2,Bob Jones,07400 100002,",
  "3,Cat Brown,0044 7500 100003,VIP",
  '4,"Dee, Ed",447800100004,"two',
  'lines"',
  "5,Eve,,",
  "6,Fay,+44 7400 100001,again",
  "7,Gus,n/a,",
  "8,Hal,+1 212 555 0142,US",
  "9,Ivy,+44 1534 456789,Jersey",
  "10,Jo,4.47911E+11,Excel",
].join("\r\n");

const CONTACTS_KEPT = ["447400100001", "447400100002", "447500100003", "447800100004", "441534456789"];

describe("prepareList on a CRM export", () => {
  it("keeps each valid GB number once, in first-seen order, and accounts for every row", async () => {
    const { summary, kept } = await prepareText("contacts.csv", CONTACTS);
    expect(kept).toEqual(CONTACTS_KEPT);
    expect(summary).toEqual({
      rows_read: 10,
      submitted_lines: 9,
      kept: 5,
      invalid_cnt: 2,
      no_code_cnt: 0,
      other_country_cnt: 1,
      duplicate_cnt: 1,
      blank: 1,
      national_normalised: 1,
      shared_code_regions: { JE: 1 },
      extensions_dropped: 0,
      spreadsheet_expanded: 0,
      ambiguous: { total: 0, international: 0, national: 0, resolved_by: "convention", votes: { international: 1, national: 0 } },
      encoding: "utf8",
      encoding_source: "detected",
    });
  });

  it("reports the column it read, how it chose it, and the file's format", async () => {
    const { column, format } = await prepareText("contacts.csv", CONTACTS);
    expect(column).toEqual({ index: 2, name: "phone", chosenBy: "header" });
    expect(format).toEqual({ kind: "csv", delimiter: ",", hasHeader: true, encoding: "utf8" });
  });

  it("writes every excluded row to the rejects CSV with its physical line, raw value, class and reason, then its record and id", async () => {
    const rejectsPath = join(await tempDir(), "rejects.csv");
    const { summary } = await prepareText("contacts.csv", CONTACTS, { rejectsPath });
    const rows = parse(await readFile(rejectsPath, "utf8"));
    // The record number differs from the line after the quoted cell that spans two lines; "id" names the record.
    expect(rows).toEqual([
      ["line", "value", "class", "reason", "record", "source:id"],
      ["7", "", "blank", "empty cell", "5", "5"],
      ["8", "+44 7400 100001", "duplicate", "duplicate of line 2", "6", "6"],
      ["9", "n/a", "invalid", "contains characters that are not part of a phone number", "7", "7"],
      ["10", "+1 212 555 0142", "other_country", "number belongs to +1 (US), not GB", "8", "8"],
      [
        "12",
        "4.47911E+11",
        "invalid",
        "spreadsheet scientific notation lost digits; format the column as text and export again",
        "10",
        "10",
      ],
    ]);
    expect(rows.length - 1 + summary.kept).toBe(summary.rows_read);
  });

  it.each([
    [["name", "Customer ID", "phone"], 2, { index: 1, label: "Customer ID" }],
    [["contactId", "phone"], 1, { index: 0, label: "contactId" }],
    [["phone", "name", "crm_ref"], 0, { index: 2, label: "crm_ref" }],
    [["phone", "name", "paid"], 0, { index: 1, label: "name" }],
    [undefined, 0, { index: 1, label: "column 2" }],
  ] as const)("identifies rejected records by %j (phone column %i) with %j", (header, phone, expected) => {
    expect(chooseIdColumn(header, header?.length ?? 3, phone)).toEqual(expected);
  });

  it("has no id column for a list of one column", () => {
    expect(chooseIdColumn(["phone"], 1, 0)).toBeUndefined();
  });

  it("quotes rejects values the way csv-stringify does", async () => {
    const rejectsPath = join(await tempDir(), "rejects.csv");
    await prepareText("list.csv", 'name,phone\nA,"12, ""34"""\n', { rejectsPath });
    expect(await readFile(rejectsPath, "utf8")).toBe(
      'line,value,class,reason,record,source:name\n2,"12, ""34""",invalid,contains characters that are not part of a phone number,1,A\n',
    );
  });

  it("prepares the example contacts for the demo", async () => {
    const { summary, column } = await prepare(join(import.meta.dirname, "..", "..", "examples", "contacts.csv"));
    expect(column).toMatchObject({ name: "phone", chosenBy: "header" });
    expect(summary.rows_read).toBeGreaterThanOrEqual(1000);
    expect(summary.shared_code_regions).toMatchObject({ JE: 2, GG: 2 });
    for (const count of [
      summary.duplicate_cnt,
      summary.blank,
      summary.invalid_cnt,
      summary.other_country_cnt,
      summary.national_normalised,
    ]) {
      expect(count).toBeGreaterThan(0);
    }
  });
});

describe("prepareList encodings and line ends", () => {
  const text = "name,phone\nAmy,07400 100001\nBob,+44 7400 100002\n";
  const utf16 = (s: string, order: "le" | "be") => {
    const le = Buffer.from("\ufeff" + s, "utf16le");
    return order === "le" ? le : Buffer.from(le.map((_, i) => le[i ^ 1]!));
  };

  it.each([
    ["UTF-8", Buffer.from(text), "utf8"],
    ["UTF-8 with BOM", Buffer.from("\ufeff" + text), "utf8-bom"],
    ["UTF-16LE with BOM", utf16(text, "le"), "utf16le"],
    ["UTF-16BE with BOM", utf16(text, "be"), "utf16be"],
  ])("reads %s", async (_name, bytes, encoding) => {
    const { kept, format } = await prepareText("list.csv", bytes);
    expect(kept).toEqual(["447400100001", "447400100002"]);
    expect(format.encoding).toBe(encoding);
  });

  it.each([
    ["CRLF", "\r\n"],
    ["CR", "\r"],
    ["LF", "\n"],
  ])("reads %s line ends with the same line numbers", async (_name, eol) => {
    const rejectsPath = join(await tempDir(), "rejects.csv");
    const { kept } = await prepareText("list.csv", ["name,phone", "Amy,07400 100001", "Bob,", "Cy,+44 7400 100002"].join(eol) + eol, {
      rejectsPath,
    });
    expect(kept).toEqual(["447400100001", "447400100002"]);
    expect(await readFile(rejectsPath, "utf8")).toContain("\n3,,blank,");
  });

  it.each([
    ["semicolon", ";"],
    ["tab", "\t"],
    ["pipe", "|"],
  ])("reads a %s-delimited file", async (_name, delimiter) => {
    const { kept, format } = await prepareText(
      "list.csv",
      `name${delimiter}phone\nAmy, A${delimiter}07400 100001\nBob${delimiter}+44 7400 100002\n`,
    );
    expect(kept).toEqual(["447400100001", "447400100002"]);
    expect(format.delimiter).toBe(delimiter);
  });

  it("reads Excel's Unicode text export: UTF-16LE, tab-delimited, named .txt", async () => {
    const { kept, format, column } = await prepareText("export.txt", utf16("Name\tMobile\r\nAmy\t07400 100001\r\n", "le"));
    expect(kept).toEqual(["447400100001"]);
    expect(format).toEqual({ kind: "csv", delimiter: "\t", hasHeader: true, encoding: "utf16le" });
    expect(column).toEqual({ index: 1, name: "Mobile", chosenBy: "header" });
  });

  it.each([
    [
      "invalid UTF-8 after a UTF-8 byte-order mark",
      Buffer.concat([Buffer.from("\ufeffname,phone\nAmy,07400 100001\nRen"), Buffer.from([0xe9]), Buffer.from(",07400 100002\n")]),
      /not UTF-8 text \(bad bytes on line 3\)/,
    ],
    ["a PNG image", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), /is a PNG image, not a text list/],
    ["a broken zip archive", Buffer.from([0x50, 0x4b, 0x03, 0x04, 20, 0, 6, 0, 8, 0]), /is a ZIP archive, not a text list/],
    ["an old Excel workbook", Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), /is an old Excel workbook \(\.xls\)/],
    [
      "UTF-16 without a BOM",
      Buffer.from("phone\n07400 100001\n", "utf16le"),
      /contains NUL characters \(line 1\).*UTF-16 without a byte-order mark/,
    ],
    ["random binary", Buffer.from([0x00, 0xff, 0x10, 0x80, 0x81, 0x00, 0x7f, 0xfe, 0x00]), /not UTF-8 text|NUL characters/],
  ])("rejects %s with InputRejectedError", async (_name, bytes, message) => {
    const path = await listFile("list.csv", bytes);
    const run = prepareList({ source: path, country: "GB", workers: 0, outputDir: await tempDir() });
    await expect(run).rejects.toBeInstanceOf(InputRejectedError);
    await expect(run).rejects.toThrow(message);
  });

  it("reads a multi-byte character split between read chunks", async () => {
    const name = "é".repeat(700_000);
    const { kept } = await prepareText("list.csv", `name,phone\n${name},07400 100001\n`);
    expect(kept).toEqual(["447400100001"]);
  });
});

describe("prepareList header and column choice", () => {
  it("takes the first column of a CSV without a header", async () => {
    const { kept, column, format } = await prepareText("list.csv", "07400 100001,Amy\n+44 7400 100002,Bob\n");
    expect(kept).toEqual(["447400100001", "447400100002"]);
    expect(column).toEqual({ index: 0, chosenBy: "first-column" });
    expect(format.hasHeader).toBe(false);
  });

  it("reads a plain list with a 'phone' header line", async () => {
    const { kept, summary, format } = await prepareText("list.txt", "phone\n07400 100001\n+44 7400 100002\n");
    expect(kept).toEqual(["447400100001", "447400100002"]);
    expect(summary.rows_read).toBe(2);
    expect(format).toEqual({ kind: "txt", hasHeader: true, encoding: "utf8" });
  });

  it("counts a stray first line of a plain list as a row, not a header", async () => {
    const { summary } = await prepareText("list.txt", "hello\n07400 100001\n");
    expect(summary).toMatchObject({ rows_read: 2, invalid_cnt: 1, kept: 1 });
  });

  it("chooses the column by content when no header names a phone column", async () => {
    const { column, kept } = await prepareText("list.csv", "Kunde,Rufnummer,Ort\nAmy,07400 100001,Leeds\nBob,+44 7400 100002,York\n");
    expect(column).toEqual({ index: 1, name: "Rufnummer", chosenBy: "content" });
    expect(kept).toHaveLength(2);
  });

  it.each([
    ["Mobile", 2],
    ["mobile", 2],
    ["3", 2],
    ["2", 1],
  ])("reads the column named by --column %j", async (column, index) => {
    const { column: chosen } = await prepareText("list.csv", "name,phone,mobile\nAmy,07400 100001,07500 100001\n", { column });
    expect(chosen).toMatchObject({ index, chosenBy: "option" });
  });

  it("rejects a --column that does not exist with a UsageError listing the columns", async () => {
    const path = await listFile("list.csv", "name,phone\nAmy,07400 100001\n");
    const run = prepareList({ source: path, country: "GB", workers: 0, column: "msisdn", outputDir: await tempDir() });
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow('has no column named "msisdn" (columns: 1 "name", 2 "phone")');
  });

  it("rejects unbalanced quotes naming the line", async () => {
    const path = await listFile("list.csv", 'name,phone\nAmy,07400 100001\n"Bob,07400 100002\nCy,07400 100003\n');
    const run = prepareList({ source: path, country: "GB", workers: 0, outputDir: await tempDir() });
    await expect(run).rejects.toBeInstanceOf(InputRejectedError);
    await expect(run).rejects.toThrow("quoted field opened on line 3 is never closed");
  });
});

describe("prepareList task rules", () => {
  const list = "phone\n07400 100001\n+44 7400 100002\n+44 1534 456789\n07624 123456\n+1 212 555 0142\n";

  it("normalises national numbers with the task country's code by default", async () => {
    const { summary, kept } = await prepareText("list.csv", list);
    expect(kept).toEqual(["447400100001", "447400100002", "441534456789", "447624123456"]);
    expect(summary).toMatchObject({ national_normalised: 2, shared_code_regions: { JE: 1, IM: 1 }, other_country_cnt: 1 });
  });

  it("classes national numbers as no_code with requireCountryCode, as the service does", async () => {
    const { summary, kept } = await prepareText("list.csv", list, { requireCountryCode: true });
    expect(kept).toEqual(["447400100002", "441534456789"]);
    expect(summary).toMatchObject({ no_code_cnt: 2, national_normalised: 0 });
  });

  it("classes regions sharing the calling code as other_country with strictRegion", async () => {
    const { summary, kept } = await prepareText("list.csv", list, { strictRegion: true });
    expect(kept).toEqual(["447400100001", "447400100002"]);
    expect(summary).toMatchObject({ other_country_cnt: 3, shared_code_regions: {} });
  });

  it("keeps numbers of every country for the carrier product without a country, and excludes national ones", async () => {
    const { summary, kept } = await prepareText("list.csv", list, { country: undefined });
    expect(kept).toEqual(["447400100002", "441534456789", "12125550142"]);
    expect(summary).toMatchObject({ no_code_cnt: 2, other_country_cnt: 0 });
  });

  it("records the settings needed to recompute identifiers, as JSON", async () => {
    const { settings } = await prepareText("list.csv", list, { strictRegion: true });
    expect(JSON.parse(JSON.stringify(settings))).toEqual({
      version: 1,
      country: "GB",
      requireCountryCode: false,
      strictRegion: true,
      digitsAs: "international",
      column: { index: 0, name: "phone" },
      delimiter: ",",
      hasHeader: true,
      encoding: "utf8",
      libphonenumber: { version: "1.13.16", metadata: "max" },
    });
  });
});

describe("prepareList output", () => {
  const numbers = Array.from({ length: 10 }, (_, i) => `07400 1000${String(i).padStart(2, "0")}`);

  it("splits the kept list into balanced chunks of at most maxTaskSize, each with its count, bytes and sha256", async () => {
    const { chunks, kept } = await prepareText("list.txt", numbers.join("\n"), { maxTaskSize: 4 });
    expect(chunks.map((c) => c.count)).toEqual([4, 3, 3]);
    expect(chunks.map((c) => c.path.replace(/.*[/\\]/, ""))).toEqual([
      "list-upload-1-of-3.txt",
      "list-upload-2-of-3.txt",
      "list-upload-3-of-3.txt",
    ]);
    expect(kept).toHaveLength(10);
    for (const chunk of chunks) {
      const bytes = await readFile(chunk.path);
      expect(bytes.length).toBe(chunk.bytes);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(chunk.sha256);
      expect(bytes.toString("utf8")).toMatch(/^(44\d{10}\n)+$/);
    }
  });

  it("writes one file when the list fits maxTaskSize", async () => {
    const { chunks } = await prepareText("list.txt", numbers.join("\n"), { maxTaskSize: 10 });
    expect(chunks).toHaveLength(1);
  });

  it("writes an explicit uploadPath, naming split parts after it", async () => {
    const dir = await tempDir();
    const single = await prepareList({
      source: await listFile("list.txt", numbers.join("\n")),
      country: "GB",
      workers: 0,
      uploadPath: join(dir, "out.txt"),
    });
    expect(single.chunks.map((c) => c.path)).toEqual([join(dir, "out.txt")]);
    const other = await tempDir();
    const split = await prepareList({
      source: await listFile("list.txt", numbers.join("\n")),
      country: "GB",
      workers: 0,
      uploadPath: join(other, "out.txt"),
      maxTaskSize: 5,
    });
    expect(split.chunks.map((c) => c.path)).toEqual([join(other, "out-1-of-2.txt"), join(other, "out-2-of-2.txt")]);
    expect((await readdir(other)).sort()).toEqual(["out-1-of-2.txt", "out-2-of-2.txt"]);
  });

  it("splits a list larger than a read into parts that rejoin byte for byte, with the whole file removed", async () => {
    const dir = await tempDir();
    const many = Array.from({ length: 200_003 }, (_, i) => `+44 7400 ${String(i).padStart(6, "0")}`);
    const source = await listFile("many.txt", many.join("\n"));
    const whole = await prepareList({ source, country: "GB", uploadPath: join(dir, "whole.txt") });
    const split = await prepareList({ source, country: "GB", uploadPath: join(dir, "part.txt"), maxTaskSize: 70_000 });
    expect(split.chunks.map((c) => c.count)).toEqual([66_668, 66_668, 66_667]);
    const parts = await Promise.all(split.chunks.map((c) => readFile(c.path)));
    expect(Buffer.concat(parts).equals(await readFile(whole.chunks[0]!.path))).toBe(true);
    parts.forEach((bytes, i) => {
      expect(bytes.length).toBe(split.chunks[i]!.bytes);
      expect(bytes.toString("latin1").split("\n").length - 1).toBe(split.chunks[i]!.count);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(split.chunks[i]!.sha256);
    });
    await expect(readFile(join(dir, "part.txt"))).rejects.toThrow(/ENOENT/);
  });

  it("refuses a device such as /dev/full as the upload file, with force or without, and leaves it", async () => {
    const source = await listFile("list.txt", numbers.join("\n"));
    for (const force of [false, true]) {
      await expect(prepareList({ source, country: "GB", workers: 0, uploadPath: "/dev/full", force })).rejects.toThrow(
        /is a device: --force replaces only a regular file/,
      );
    }
    expect((await stat("/dev/full")).isCharacterDevice()).toBe(true);
  });

  it("throws the upload file and the rejects away into /dev/null, and leaves it a device", async () => {
    const source = await listFile("list.txt", numbers.join("\n"));
    const result = await prepareList({ source, country: "GB", workers: 0, uploadPath: "/dev/null", rejectsPath: "/dev/null" });
    expect(result.summary.kept).toBeGreaterThan(0);
    expect((await stat("/dev/null")).isCharacterDevice()).toBe(true);
  });

  it("removes the partial upload file when preparation fails", async () => {
    const dir = await tempDir();
    const source = await listFile("broken.csv", 'name,phone\n"unclosed,07400 100001\n');
    await expect(prepareList({ source, country: "GB", workers: 0, uploadPath: join(dir, "out.txt") })).rejects.toThrow();
    await expect(readFile(join(dir, "out.txt"))).rejects.toThrow(/ENOENT/);
  });

  it("refuses, before reading, an upload or rejects file that is the list itself, by its name or through a link", async () => {
    const source = await listFile("list.csv", "phone\n07400 100001\n");
    const link = join(await tempDir(), "link.csv");
    await symlink(source, link);
    const before = await readFile(source, "utf8");
    for (const output of [{ uploadPath: source }, { rejectsPath: source }, { rejectsPath: link }]) {
      const run = prepareList({ source, country: "GB", workers: 0, force: true, ...output });
      await expect(run).rejects.toBeInstanceOf(DestinationIsSourceError);
      await expect(run).rejects.toThrow(/is the list being read/);
    }
    expect(await readFile(source, "utf8")).toBe(before);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
  });

  it("refuses an existing upload or rejects file without force, and with force replaces it whole", async () => {
    const dir = await tempDir();
    const [upload, rejects] = [join(dir, "upload.txt"), join(dir, "rejects.csv")];
    for (const path of [upload, rejects]) await writeFile(path, "precious\n");
    const source = await listFile("list.csv", "phone\n07400 100001\nnot a number\n");
    await expect(prepareList({ source, country: "GB", workers: 0, uploadPath: upload })).rejects.toThrow(/upload\.txt already exists/);
    await expect(prepareList({ source, country: "GB", workers: 0, rejectsPath: rejects })).rejects.toThrow(/rejects\.csv already exists/);
    expect(await readFile(upload, "utf8")).toBe("precious\n");
    await prepareList({ source, country: "GB", workers: 0, uploadPath: upload, rejectsPath: rejects, force: true });
    expect(await readFile(upload, "utf8")).toBe("447400100001\n");
    expect(await readFile(rejects, "utf8")).toMatch(/^line,value,class,reason.*\n3,not a number,invalid,/);
    expect((await readdir(dir)).sort()).toEqual(["rejects.csv", "upload.txt"]);
  });

  it("leaves a file it would replace as it was when preparation fails", async () => {
    const dir = await tempDir();
    const rejects = join(dir, "rejects.csv");
    await writeFile(rejects, "precious\n");
    const source = await listFile("broken.csv", 'name,phone\n"unclosed,07400 100001\n');
    await expect(prepareList({ source, country: "GB", workers: 0, rejectsPath: rejects, force: true })).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["rejects.csv"]);
    expect(await readFile(rejects, "utf8")).toBe("precious\n");
  });

  it("writes one empty upload file when nothing is kept", async () => {
    const { chunks, summary } = await prepareText("list.txt", "n/a\n12345\n");
    expect(summary.kept).toBe(0);
    expect(chunks).toEqual([expect.objectContaining({ count: 0, bytes: 0 })]);
  });

  it("accounts for an empty file", async () => {
    const { summary, chunks } = await prepareText("list.csv", "");
    expect(summary.rows_read).toBe(0);
    expect(chunks).toHaveLength(1);
  });

  it("reads a stream (stdin) and reports progress", async () => {
    const progress: number[] = [];
    const stream = Readable.from([Buffer.from("phone\n07400 100001\n"), Buffer.from("+44 7400 100002\n")]);
    const { kept } = await prepare({ stream, name: "stdin" }, { onProgress: (rows) => progress.push(rows) });
    expect(kept).toEqual(["447400100001", "447400100002"]);
    expect(progress.at(-1)).toBe(2);
  });
});

describe("prepareList usage errors", () => {
  it.each([
    ["a missing file", async () => join(await tempDir(), "nope.csv"), /No such file/],
    ["a directory", async () => tempDir(), /is a directory, not a list file/],
  ])("rejects %s with a UsageError", async (_name, path, message) => {
    const run = prepareList({ source: await path(), country: "GB", workers: 0 });
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(message);
  });

  it.each([
    ["an unknown country", { country: "XX" }, /Unknown country "XX"/],
    ["a maxTaskSize of 0", { maxTaskSize: 0 }, /maximum task size/],
    ["a negative worker count", { workers: -1 }, /number of workers/],
    ["both uploadPath and outputDir", { uploadPath: "/tmp/a.txt", outputDir: "/tmp" }, /either an upload file or an output directory/],
  ])("rejects %s with a UsageError", async (_name, options, message) => {
    const source = await listFile("list.txt", "07400 100001\n");
    await expect(prepareList({ source, country: "GB", workers: 0, ...(options as object) })).rejects.toThrow(message);
  });

  it("rejects a rejects path in a missing directory with a UsageError", async () => {
    const source = await listFile("list.txt", "07400 100001\n");
    const run = prepareList({ source, country: "GB", workers: 0, rejectsPath: join(await tempDir(), "no", "such", "dir.csv") });
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(/Cannot write .*dir\.csv: the directory .* does not exist/);
  });
});

describe("prepareList stops when its signal aborts (issue 18, points 7 and 10)", () => {
  it("gives up a stdin that stays open, rejecting with the signal's reason and leaving nothing behind", async () => {
    const stdin = new PassThrough();
    stdin.write("+447400100001\n");
    const controller = new AbortController();
    const dir = await tempDir();
    const uploadPath = join(dir, "upload.txt");
    const run = prepareList({ source: { stream: stdin, name: "stdin" }, country: "GB", workers: 0, uploadPath, signal: controller.signal });
    const reason = new Error("--timeout 3 ran out");
    setTimeout(() => controller.abort(reason), 50);
    await expect(run).rejects.toBe(reason);
    expect(stdin.destroyed).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it("stops reading a file midway, rejecting with the signal's reason and leaving no upload file", async () => {
    const source = await listFile(
      "big.txt",
      `${Array.from({ length: 200_000 }, (_, i) => `+44 7400 ${100_000 + (i % 800_000)}`).join("\n")}\n`,
    );
    const controller = new AbortController();
    const reason = new Error("stopped");
    const dir = await tempDir();
    const progress: number[] = [];
    const run = prepareList({
      source,
      country: "GB",
      workers: 0,
      uploadPath: join(dir, "upload.txt"),
      signal: controller.signal,
      onProgress: (rows) => {
        progress.push(rows);
        controller.abort(reason);
      },
    });
    await expect(run).rejects.toBe(reason);
    expect(progress).toHaveLength(1);
    expect(progress[0]).toBeLessThan(200_000);
    expect(await readdir(dir)).toEqual([]);
  });

  it("does not start when the signal has already aborted", async () => {
    const source = await listFile("list.txt", "07400 100001\n");
    const reason = new Error("already");
    await expect(prepareList({ source, country: "GB", workers: 0, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});
