import { describe, expect, it } from "vitest";
import { SharedStringTable, SharedStringsPart } from "../../src/prepare/shared-strings.js";
import { readPartXml } from "../helpers/workbook-parts.js";

const MiB = 1024 * 1024;

function tableOf(strings: readonly string[]): SharedStringTable {
  const table = new SharedStringTable();
  for (const text of strings) table.add(text);
  return table;
}

describe("SharedStringTable", () => {
  it("gives back each string by its index, in the order added, including empty and non-ASCII ones", () => {
    const strings = ["mobile", "", "+44 7400 100001", "Zoë Ångström", "电话 📞", "_x000D_", "a\u0000b"];
    const table = tableOf(strings);
    expect(table.size).toBe(strings.length);
    expect(strings.map((_, i) => table.get(i))).toEqual(strings);
  });

  it("holds an empty string first, or where its buffers end", () => {
    const strings = ["", "a", "x".repeat(8 * MiB - 1), "", "b"];
    const table = tableOf(strings);
    expect(strings.map((_, i) => table.get(i))).toEqual(strings);
  });

  it("holds no string outside the indexes it was given (how a missed shared-strings part shows)", () => {
    const table = tableOf(["a", "b"]);
    expect([table.get(-1), table.get(2), table.get(1.5), table.get(Number.NaN)]).toEqual([undefined, undefined, undefined, undefined]);
    expect(new SharedStringTable().get(0)).toBeUndefined();
  });

  it("keeps many strings (its offsets grow) without mixing them up", () => {
    const strings = Array.from({ length: 100_000 }, (_, i) => `+44 7400 ${String(i).padStart(6, "0")}${"é".repeat(i % 5)}`);
    const table = tableOf(strings);
    expect(table.size).toBe(100_000);
    for (const i of [0, 1, 1023, 1024, 1025, 65_535, 99_999]) expect(table.get(i)).toBe(strings[i]);
    expect(strings.every((text, i) => table.get(i) === text)).toBe(true);
  });

  it("reads strings whose bytes straddle its buffers, multi-byte characters split between them included", () => {
    // Odd lengths of 2- and 4-byte characters put buffer boundaries inside characters.
    const strings = ["x", "é".repeat(3 * MiB + 1), "🙂".repeat(MiB + 3), "tail", "ü".repeat(9 * MiB), "end"];
    const table = tableOf(strings);
    expect(strings.map((_, i) => table.get(i))).toEqual(strings);
  });
});

/** The strings a shared strings part holds, read as the workbook reader reads them. */
function stringsOf(xml: string): string[] {
  const part = readPartXml(xml, new SharedStringsPart((index) => new Error(`string ${index + 1} is too long`)));
  return Array.from({ length: part.table.size }, (_, i) => part.table.get(i)!);
}

describe("SharedStringsPart", () => {
  it("reads each string: plain, rich (runs joined), empty, and with its phonetic guide left out", () => {
    const xml =
      '<sst xmlns="main" count="5" uniqueCount="5"><si><t>+44 7400 100001</t></si>' +
      '<si><r><t>+44 </t></r><r><rPr><b/></rPr><t xml:space="preserve">7400 100004</t></r></si>' +
      "<si><t/></si><si/>" +
      '<si><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/></si></sst>';
    expect(stringsOf(xml)).toEqual(["+44 7400 100001", "+44 7400 100004", "", "", "東京"]);
  });

  it("decodes XML's entities and leaves Excel's _xHHHH_ escapes for cellText, under any namespace prefix", () => {
    const xml = '<x:sst xmlns:x="main"><x:si><x:t>a &amp; b_x000D_&#233;</x:t></x:si><x:si><x:t><![CDATA[<c>]]></x:t></x:si></x:sst>';
    expect(stringsOf(xml)).toEqual(["a & b_x000D_é", "<c>"]);
  });

  it("refuses a string longer than Excel's 32,767 characters in a cell, naming it", () => {
    const xml = `<sst><si><t>ok</t></si><si><t>${"x".repeat(32_768)}</t></si></sst>`;
    expect(() => stringsOf(xml)).toThrow("string 2 is too long");
    expect(stringsOf(`<sst><si><t>${"_x000D_".repeat(10_000)}</t></si></sst>`)[0]).toHaveLength(70_000);
  });
});
