import { describe, expect, it } from "vitest";
import { cellXml, columnName, xmlText } from "../../src/results/xlsx-xml.js";

describe("xlsx XML", () => {
  it.each([
    [0, "A"],
    [25, "Z"],
    [26, "AA"],
    [51, "AZ"],
    [52, "BA"],
    [701, "ZZ"],
    [702, "AAA"],
    [16_383, "XFD"],
  ])("names column %i %s", (index, name) => {
    expect(columnName(index)).toBe(name);
  });

  it.each([
    ["plain", "plain"],
    ["<&>", "&lt;&amp;&gt;"],
    ["a\r\nb", "a&#13;\nb"],
    ["tab\tkept", "tab\tkept"],
    ["bell\u0007", "bell_x0007_"],
    ["\u000b\u000c\u001f", "_x000B__x000C__x001F_"],
    ["\uffff", "_xFFFF_"],
    ["_x0041_ looks like an escape", "_x005F_x0041_ looks like an escape"],
    ["_x00_ does not", "_x00_ does not"],
  ])("writes %j as %j", (text, xml) => {
    expect(xmlText(text)).toBe(xml);
  });

  it.each([
    ["a string", "B2", "=1+1", '<c r="B2" t="inlineStr"><is><t>=1+1</t></is></c>'],
    ["a string with edge spaces", "A1", " x", '<c r="A1" t="inlineStr"><is><t xml:space="preserve"> x</t></is></c>'],
    ["a boolean", "C3", true, '<c r="C3" t="b"><v>1</v></c>'],
    ["a number", "D4", 42, '<c r="D4"><v>42</v></c>'],
    ["an empty string as no cell", "E5", "", ""],
  ] as const)("writes %s as an inline value, never a formula", (_name, ref, value, xml) => {
    expect(cellXml(ref, value)).toBe(xml);
  });
});
