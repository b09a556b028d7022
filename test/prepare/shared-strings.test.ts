import { describe, expect, it } from "vitest";
import { SharedStringTable, sharedStringOf } from "../../src/prepare/shared-strings.js";

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

describe("sharedStringOf", () => {
  it("reads a shared string in exceljs 4.4.0's shape, { index, text }, plain, rich (runs joined) or empty", () => {
    expect(sharedStringOf({ index: 0, text: "+44 7400 100001" })).toBe("+44 7400 100001");
    expect(
      sharedStringOf({ index: 1, text: { richText: [{ text: "+44 " }, { font: { bold: true }, text: "7400 100004" }, { text: null }] } }),
    ).toBe("+44 7400 100004");
    expect(sharedStringOf({ index: 2, text: null })).toBe("");
  });

  it("reads one in the shape exceljs's README documents, { eventType: 'shared-strings', value }", () => {
    expect(sharedStringOf({ eventType: "shared-strings", value: { index: 0, text: "07400 100002" } })).toBe("07400 100002");
    expect(sharedStringOf({ eventType: "shared-strings", value: "07400 100002" })).toBe("07400 100002");
    expect(sharedStringOf({ eventType: "shared-strings", value: { richText: [{ text: "a" }, { text: "b" }] } })).toBe("ab");
  });

  it("leaves escapes for cellText, and is undefined for the reader's other items", () => {
    expect(sharedStringOf({ index: 0, text: "a_x000D_b" })).toBe("a_x000D_b");
    expect(sharedStringOf({ eventType: "worksheet", value: {} })).toBeUndefined();
    expect(sharedStringOf({ eventType: "hyperlinks", value: {} })).toBeUndefined();
    expect(sharedStringOf(undefined)).toBeUndefined();
  });
});
