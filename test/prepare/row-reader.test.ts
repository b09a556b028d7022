import { readdirSync, readlinkSync, realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { createRowClassifier, openRows } from "../../src/prepare/index.js";
import { listFile, prepare, recordsOf, tempDir } from "./helpers.js";

const CSV =
  [
    "id,name,phone",
    '1,"Smith, Amy",07400 100001',
    '2,"Two',
    'lines",+44 7400 100001',
    "3,Cy,",
    "4,Di,+1 212 555 0142",
    "5,Ed,+44 7400 100005",
  ].join("\r\n") + "\r\n";

/** How many of this process's file descriptors are open on `path` (Linux's /proc/self/fd). */
function descriptorsOn(path: string): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(join("/proc/self/fd", fd)) === path;
    } catch {
      // The descriptor readdir itself used, closed by now.
      return false;
    }
  }).length;
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("openRows (the reader the join reuses)", () => {
  it("yields every data row with its line, fields and original text, and the header and line end apart", async () => {
    const rows = await openRows(await listFile("list.csv", CSV));
    expect(rows.header?.fields).toEqual(["id", "name", "phone"]);
    expect(rows.lineEnding).toBe("\r\n");
    expect(rows.columnCount).toBe(3);
    const records = await all(recordsOf(rows));
    expect(records.map((r) => r.line)).toEqual([2, 3, 5, 6, 7]);
    expect(records[1]!.fields).toEqual(["2", "Two\r\nlines", "+44 7400 100001"]);
    expect([rows.header!.raw, ...records.map((r) => r.raw)].join("\r\n") + "\r\n").toBe(CSV);
  });

  it("reads the same dialect again from stored settings, without guessing", async () => {
    const path = await listFile("list.csv", "07400 100001;Amy\n07400 100002;Bob\n");
    const rows = await openRows(path, { delimiter: ";", hasHeader: true });
    expect(rows.header?.fields).toEqual(["07400 100001", "Amy"]);
    expect((await all(recordsOf(rows))).map((r) => r.fields)).toEqual([["07400 100002", "Bob"]]);
  });

  it("yields the same rows as text blocks, each starting on its record's line", async () => {
    const rows = await openRows(await listFile("list.csv", CSV));
    const blocks = await all(rows.pieces(2));
    expect(blocks[0]).toEqual({ text: CSV.slice("id,name,phone\r\n".length), firstLine: 2 });
    expect(blocks.slice(1).every((block) => "text" in block && block.text === "")).toBe(true);
  });

  it("releases the file when closed before the end", async () => {
    // Longer than the 64 KiB the opening reads to find the dialect: the file is still being read when it is closed.
    const path = realpathSync(await listFile("long.csv", "phone\n" + "07400 100001\n".repeat(10_000)));
    const rows = await openRows(path);
    expect(descriptorsOn(path)).toBe(1);
    await rows.close();
    expect(descriptorsOn(path)).toBe(0);
  });
});

describe("createRowClassifier (the classifier the join reuses)", () => {
  it("marks a duplicate with the line and identifier of its first occurrence", () => {
    const firstSeen: Array<number | string> = [];
    const classifier = createRowClassifier({ country: "GB" }, (key) => firstSeen.push(key));
    expect(classifier.classify("07400 100001", 2)).toEqual({ class: "kept", identifier: "447400100001", national: true });
    expect(classifier.classify("+44 7400 100001", 3)).toEqual({
      class: "duplicate",
      identifier: "447400100001",
      firstLine: 2,
      reason: "duplicate of line 2",
    });
    expect(classifier.classify("n/a", 4).class).toBe("invalid");
    expect(firstSeen).toEqual([447400100001]);
    classifier.classify("07400 100002", 5);
    expect(firstSeen).toEqual([447400100001, 447400100002]);
  });

  it("does not count a repeated excluded number as a duplicate", () => {
    const classifier = createRowClassifier({ country: "GB" });
    classifier.classify("+1 212 555 0142", 1);
    expect(classifier.classify("+1 212 555 0142", 2).class).toBe("other_country");
  });

  it("recomputes, from prepareList's settings, exactly the classes and identifiers preparation wrote", async () => {
    const rejectsPath = join(await tempDir(), "rejects.csv");
    const source = await listFile("list.csv", CSV);
    const prepared = await prepare(source, { rejectsPath });
    const settings = JSON.parse(JSON.stringify(prepared.settings)) as typeof prepared.settings;

    const rows = await openRows(source, settings);
    const classifier = createRowClassifier(settings);
    const kept: string[] = [];
    const rejected: string[][] = [];
    for await (const record of recordsOf(rows)) {
      const cell = record.fields[settings.column.index] ?? "";
      const row = classifier.classify(cell, record.line);
      if (row.class === "kept") kept.push(row.identifier!);
      else rejected.push([String(record.line), cell, row.class, row.reason ?? ""]);
    }
    expect(kept).toEqual(prepared.kept);
    // The rejects' own columns (record and id come after them).
    const records: string[][] = parse(await readFile(rejectsPath, "utf8"));
    const written = records.slice(1).map((row) => row.slice(0, 4));
    expect(rejected).toEqual(written);
  });
});
