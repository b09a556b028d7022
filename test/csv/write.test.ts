import { describe, expect, it } from "vitest";
import { csvText, delimitedLine, neutraliseFormula, plainLinesMayHoldFormula, sourceRecordText } from "../../src/csv/write.js";

const HOSTILE = [
  "=1+1",
  "+44 7400 100000",
  "-2",
  "@SUM(A1)",
  "\tx",
  "\rx",
  "\nx",
  "x\ry",
  "x\r",
  "＝1",
  "＋1",
  "－1",
  "＠1",
  "a=b",
  "",
  "'=1",
  'say "hi", twice',
];

describe("neutraliseFormula", () => {
  it.each([
    ["=1+1", "'=1+1"],
    ["+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"],
    ["-2+3", "'-2+3"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["\t=1", "'\t=1"],
    ["\r=1", "'\r=1"],
    ["\n=1", "'\n=1"],
    ["＝1+1", "'＝1+1"],
    ["Vodafone", "Vodafone"],
    ["a=b", "a=b"],
    ["", ""],
  ])("writes %j as %j", (value, written) => {
    expect(neutraliseFormula(value)).toBe(written);
  });
});

describe("delimitedLine and csvText", () => {
  it.each([
    [",", false],
    [",", true],
    ["\t", false],
    ["\t", true],
  ] as const)("write the same line with delimiter %j (verbatim %s)", (delimiter, verbatim) => {
    expect(delimitedLine(HOSTILE, delimiter, verbatim)).toBe(csvText([HOSTILE], { delimiter, verbatim }));
  });

  it("write verbatim only the columns asked for", () => {
    const keepFirst = (column: number) => column === 0;
    expect(delimitedLine(["=a", "=b"], ",", keepFirst)).toBe("=a,'=b\n");
    expect(csvText([["=a", "=b", 3]], { verbatim: keepFirst })).toBe("=a,'=b,3\n");
  });
});

describe("sourceRecordText", () => {
  const record = { raw: '"=1+1";x', fields: ["=1+1", "x"] };
  it("gives a source record's own text back unless asked to neutralise", () => {
    expect(sourceRecordText(record, false, { delimiter: ";" })).toBe('"=1+1";x');
    expect(sourceRecordText({ raw: "a;b", fields: ["a", "b"] }, true, { delimiter: ";" })).toBe("a;b");
  });

  it("writes the fields again, neutralised and quoted like the source, when one would start a formula", () => {
    expect(sourceRecordText(record, true, { delimiter: ";" })).toBe("'=1+1;x");
    expect(sourceRecordText(record, true, { delimiter: ";", quoteAll: true })).toBe('"\'=1+1";"x"');
  });
});

describe("plainLinesMayHoldFormula", () => {
  it.each([
    ["447400100001,EE,London,\n447400100002,O2,,\n", false],
    ["=1,EE\n", true],
    ["447400100001,+cmd\n", true],
    ["447400100001,EE\n-2,x\n", true],
    ["447400100001,a=b,x-y@z\n", false],
    ["447400100001,\tx\n", true],
    ["447400100001,＠x\n", true],
  ])("says %j may hold a formula: %s", (text, may) => {
    expect(plainLinesMayHoldFormula(text)).toBe(may);
  });
});
