import { describe, expect, it } from "vitest";
import { RecordEnd, splitQuotedLine } from "../../src/results/csv-quoting.js";
import { planPassthrough } from "../../src/results/source-parts.js";

describe("splitQuotedLine", () => {
  it.each([
    ["plain fields", "a,b,c", ["a", "b", "c"]],
    ["a quoted field with a comma", '1,"a,b",c', ["1", "a,b", "c"]],
    ["doubled quotes", '"say ""hi""",x', ['say "hi"', "x"]],
    ["an empty quoted field", '"",x', ["", "x"]],
    ["a trailing empty field", '"a",', ["a", ""]],
    ["a quote inside an unquoted field, kept as csv-parse keeps it", 'ab"c,d', ['ab"c', "d"]],
  ])("splits %s", (_name, line, fields) => {
    expect(splitQuotedLine(`${line}\n`, 0, line.length)).toEqual(fields);
  });

  it.each([
    ["a quote closed on a later line", '1,"a'],
    ["text after a closing quote", '1,"a"b'],
    ["a doubled quote that leaves the field open", '1,"a""'],
  ])("leaves %s to csv-parse", (_name, line) => {
    expect(splitQuotedLine(`${line}\nmore"\n`, 0, line.length)).toBeUndefined();
  });

  it("reads only its own line", () => {
    const text = 'x,"1",y\n"2",z\n';
    expect(splitQuotedLine(text, 8, 13)).toEqual(["2", "z"]);
  });
});

describe("RecordEnd", () => {
  /** Feeds each line in turn and reports, after each, whether a record ended there. */
  function ends(lines: string[], crlf: boolean): boolean[] {
    const tracker = new RecordEnd(crlf);
    return lines.map((line) => tracker.feed(line, 0, line.length));
  }

  it.each([
    ["a plain line", ["a,b\n"], false, [true]],
    ["a quoted field over two lines", ['a,"b\n', 'c",d\n'], false, [false, true]],
    ["doubled quotes that keep the field open", ['a,"b""\n', '"\n'], false, [false, true]],
    ["a quote in the middle of a field, which opens nothing", ['a,b"c\n'], false, [true]],
    ["a bare line feed in a CRLF file", ["a,b\n", "c\r\n"], true, [false, true]],
    ["a CRLF inside quotes", ['"a\r\n', 'b"\r\n'], true, [false, true]],
    ["an unterminated last piece", ["a,b"], false, [false]],
  ])("finds the end of %s", (_name, lines, crlf, expected) => {
    expect(ends(lines, crlf)).toEqual(expected);
  });
});

describe("planPassthrough", () => {
  it.each([
    ["a header with LF", "identifier,activated\n1,true\n", { lineEnd: "\n", first: ["identifier", "activated"], bomBytes: 0, firstLineBytes: 21 }],
    ["a BOM and CRLF", "\uFEFFidentifier,activated\r\n", { lineEnd: "\r\n", first: ["identifier", "activated"], bomBytes: 3, firstLineBytes: 25 }],
    ["a quoted first line", '"1","true"\n', { lineEnd: "\n", first: ["1", "true"], bomBytes: 0, firstLineBytes: 11 }],
  ])("reads %s", (_name, head, plan) => {
    expect(planPassthrough(Buffer.from(head))).toEqual(plan);
  });

  it.each([
    ["no line end yet", "identifier,activated"],
    ["an empty first line", "\nidentifier,activated\n"],
    ["a carriage return inside the first line", "identifier\r,activated\n"],
    ["a lone carriage return as the line end", "identifier,activated\r1,true\r"],
    ["a quoted field running onto the next line", '"ident\nifier",activated\n'],
  ])("leaves %s to the general path", (_name, head) => {
    expect(planPassthrough(Buffer.from(head))).toBeUndefined();
  });

  it("leaves a UTF-16 file to the general path", () => {
    expect(planPassthrough(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("identifier\n", "utf16le")]))).toBeUndefined();
  });
});
