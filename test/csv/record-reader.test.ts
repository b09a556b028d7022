import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { CsvSyntaxError } from "../../src/csv/errors.js";
import { RecordReader, type SourceRecord } from "../../src/csv/record-reader.js";

/** Reads text in one go; `plain` reads a list with no delimiter. */
function read(text: string, delimiter = ","): SourceRecord[] {
  const reader = new RecordReader(delimiter === "plain" ? undefined : delimiter);
  return [...reader.push(text), ...reader.end()];
}

/** Reads text in chunks cut at the given positions. */
function readCut(text: string, cuts: number[]): SourceRecord[] {
  const reader = new RecordReader(",");
  const records: SourceRecord[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    records.push(...reader.push(text.slice(from, cut)));
    from = cut;
  }
  return [...records, ...reader.end()];
}

const TRICKY = [
  "id,name,phone,notes",
  '1,"Smith, John",+44 7400 123456,"said ""call me"""',
  '2,"Two\r\nlines",07400 123457,',
  '3,O\'Brien,"07400 123458",5\'11" tall',
  "",
  '4,"x" ,07400123459,"a\nb\rc"',
  "5,,,",
].join("\r\n");

describe("RecordReader (CSV)", () => {
  it("splits fields on the delimiter and unquotes quoted fields", () => {
    expect(read('a,"b,c","d ""e"""\n').map((r) => r.fields)).toEqual([["a", "b,c", 'd "e"']]);
  });

  it.each([
    ["LF", "a,1\nb,2\n"],
    ["CRLF", "a,1\r\nb,2\r\n"],
    ["CR", "a,1\rb,2\r"],
    ["no final line end", "a,1\nb,2"],
  ])("ends records at %s", (_name, text) => {
    expect(read(text).map((r) => [r.line, ...r.fields])).toEqual([
      [1, "a", "1"],
      [2, "b", "2"],
    ]);
  });

  it("keeps line ends inside quotes in the field and numbers records by the physical line they start on", () => {
    const records = read(TRICKY);
    expect(records.map((r) => r.line)).toEqual([1, 2, 3, 5, 6, 7, 10]);
    expect(records[2]!.fields[1]).toBe("Two\r\nlines");
    expect(records[5]!.fields[3]).toBe("a\nb\rc");
  });

  it("treats a quote inside an unquoted field as a character and keeps text after a closing quote", () => {
    const records = read(TRICKY);
    expect(records[3]!.fields).toEqual(["3", "O'Brien", "07400 123458", "5'11\" tall"]);
    expect(records[5]!.fields.slice(0, 2)).toEqual(["4", "x "]);
  });

  it("reads an empty line as one empty field, and a row of empty fields as such", () => {
    const records = read(TRICKY);
    expect(records[4]!.fields).toEqual([""]);
    expect(records[6]!.fields).toEqual(["5", "", "", ""]);
  });

  it("keeps each record's original text without its line end", () => {
    const records = read(TRICKY);
    expect(records.map((r) => r.raw).join("\r\n")).toBe(TRICKY);
  });

  it("reads the same records however the text is cut into chunks", () => {
    const whole = read(TRICKY);
    for (let cut = 0; cut <= TRICKY.length; cut++) expect(readCut(TRICKY, [cut])).toEqual(whole);
    expect(
      readCut(
        TRICKY,
        Array.from({ length: TRICKY.length }, (_, i) => i),
      ),
    ).toEqual(whole);
  });

  it("reads one column of the same records however the text is cut", () => {
    const whole = read(TRICKY);
    for (let cut = 0; cut <= TRICKY.length; cut++) {
      const reader = new RecordReader(",");
      const a = reader.pushCells(TRICKY.slice(0, cut), 2);
      const b = reader.pushCells(TRICKY.slice(cut), 2);
      const c = reader.endCells(2);
      expect([...a.lines, ...b.lines, ...c.lines]).toEqual(whole.map((r) => r.line));
      expect([...a.cells, ...b.cells, ...c.cells]).toEqual(whole.map((r) => r.fields[2] ?? ""));
    }
  });

  it.each([";", "\t", "|"])("reads %j-delimited text", (delimiter) => {
    const text = ["name", "phone"].join(delimiter) + "\n" + ['"a' + delimiter + 'b"', "07400 123456"].join(delimiter) + "\n";
    expect(read(text, delimiter).map((r) => r.fields)).toEqual([
      ["name", "phone"],
      ["a" + delimiter + "b", "07400 123456"],
    ]);
  });

  it("agrees with csv-parse on generated quoted CSV", () => {
    const values = ["", "plain", "with, comma", 'with "quotes"', "multi\nline", "crlf\r\nline", " spaced ", "+44 7400 123456"];
    const quote = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % values.length;
    const rows = Array.from({ length: 500 }, () => Array.from({ length: 4 }, () => values[next()]!));
    const text = rows.map((row) => row.map(quote).join(",")).join("\r\n") + "\r\n";
    expect(read(text).map((r) => r.fields)).toEqual(parse(text, { relax_column_count: true }));
  });
});

describe("RecordReader errors", () => {
  it("rejects a quote that is never closed, naming the line it opened on", () => {
    const text = 'name,phone\n"Smith, John,07400 123456\nBob,07400 123457\n';
    expect(() => read(text)).toThrow(expect.objectContaining({ name: "CsvSyntaxError", problem: "unclosed-quote", line: 2 }));
    expect(() => read(text)).toThrow(/opened on line 2 is never closed/);
  });

  it("rejects a quoted field that swallowed rows and is followed by more text", () => {
    const text = 'name,phone\n"Smith, John,07400 123456\nBob,07400 123457\n"Jones, Amy",07400 123458\n';
    expect(() => read(text)).toThrow(/opened on line 2 runs to line 4/);
  });

  it("rejects an unclosed quote that grows past 1 MiB before the file ends", () => {
    const reader = new RecordReader(",");
    reader.push('a,"b\n');
    expect(() => reader.push("x".repeat(1 << 20))).toThrow(/opened on line 1 runs on for more than 1 MiB/);
  });

  it("rejects a line without quotes that grows past 1 MiB, naming it", () => {
    const reader = new RecordReader(undefined);
    reader.push("a\nb\n");
    expect(() => reader.push("7".repeat((1 << 20) + 1))).toThrow(new CsvSyntaxError("endless-line", 3, "line 3 is longer than 1 MiB."));
  });
});

describe("RecordReader (plain list)", () => {
  it("reads one value per line, quotes and delimiters included, with CRLF, LF and CR", () => {
    expect(read('+447400123456\r\n"07400 123456"\n07400,123457\r\r', "plain").map((r) => [r.line, r.fields[0]])).toEqual([
      [1, "+447400123456"],
      [2, '"07400 123456"'],
      [3, "07400,123457"],
      [4, ""],
    ]);
  });

  it("names the line of text pushed so far", () => {
    const reader = new RecordReader(undefined);
    reader.push("a\nb\nc");
    expect(reader.lineAfter("d\ne")).toBe(4);
  });
});

describe("RecordReader.pushBlock (the cut that lets workers parse)", () => {
  it("gives each block the line its first record starts on", () => {
    const splitter = new RecordReader(",");
    const a = splitter.pushBlock('h1,h2\r\n1,"x\r\ny"\r\n2,');
    const b = splitter.pushBlock("z\r\n3,w");
    const c = splitter.endBlock();
    expect([a, b, c]).toEqual([
      { text: 'h1,h2\r\n1,"x\r\ny"\r\n', firstLine: 1 },
      { text: "2,z\r\n", firstLine: 4 },
      { text: "3,w", firstLine: 5 },
    ]);
  });
});
