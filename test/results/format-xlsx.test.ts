import { describe, expect, it } from "vitest";
import { renderXlsx, type SummaryTable } from "../../src/results/format-xlsx.js";
import { ResultFileError } from "../../src/results/errors.js";
import { readWorkbook } from "../helpers/xlsx.js";
import { rowsOf } from "./helpers.js";

async function bytesOf(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/** Values a spreadsheet would take for a formula or a number if they were not written as text. */
const FORMULA_LIKE = ["=1+1", "+44 7400 100000", "-2+3", "@SUM(A1:A2)", '=HYPERLINK("http://x")', "0012", "1E5", "true "];

describe("renderXlsx", () => {
  it("writes every row as string cells, the activated column's true/false as booleans, and no formula", async () => {
    const rows = [
      ["447400100000", "true", "=1+1"],
      ["447400100001", "false", "true"],
      ["447400100002", "", "plain"],
      ["447400100003", "TRUE", "@SUM(A1:A2)"],
      ...FORMULA_LIKE.map((value, i) => [String(447500100000 + i), "true", value]),
    ];
    const workbook = await readWorkbook(await bytesOf(renderXlsx(rowsOf([["identifier", "activated", "note"], ...rows]))));
    expect(workbook.map((sheet) => sheet.name)).toEqual(["Results"]);
    const [results] = workbook;
    expect(results!.formulas).toBe(0);
    expect(results!.rows).toEqual([
      ["identifier", "activated", "note"],
      ...rows.map(([id, activated, note]) => [id, activated === "true" ? true : activated === "false" ? false : activated, note]),
    ]);
    // Only exact true/false in the activated column become booleans; "true" elsewhere and "TRUE" stay text.
    expect(results!.kinds.slice(1, 5)).toEqual([
      ["string", "boolean", "string"],
      ["string", "boolean", "string"],
      ["string", "blank", "string"],
      ["string", "string", "string"],
    ]);
  });

  it.each([
    ["markup", "<b>AT&T</b> \"quoted\" 'single'"],
    ["line breaks", "first\nsecond\r\nthird\rfourth"],
    ["edge spaces", "  padded  "],
    ["a tab", "a\tb"],
    ["emoji and accents", "Télécom 📶 Ünïcödé"],
  ])("keeps %s exactly", async (_name, value) => {
    const [sheet] = await readWorkbook(
      await bytesOf(
        renderXlsx(
          rowsOf([
            ["identifier", "carrier"],
            ["441", value],
          ]),
        ),
      ),
    );
    expect(sheet!.rows[1]).toEqual(["441", value]);
  });

  it("writes a control character XML cannot hold as Excel's escape rather than a broken file", async () => {
    const [sheet] = await readWorkbook(
      await bytesOf(
        renderXlsx(
          rowsOf([
            ["identifier", "carrier"],
            ["441", "a\u0001b\u000bc"],
          ]),
        ),
      ),
    );
    // exceljs does not decode ST_Xstring escapes (Excel does); what matters is that the file reads.
    expect(sheet!.rows[1]).toEqual(["441", "a_x0001_b_x000B_c"]);
  });

  it("continues on a second sheet, header repeated, when a sheet is full", async () => {
    const rows = Array.from({ length: 7 }, (_, i) => [String(447400100000 + i), i % 2 === 0 ? "true" : "false"]);
    const workbook = await readWorkbook(await bytesOf(renderXlsx(rowsOf([["identifier", "activated"], ...rows]), { sheetRows: 4 })));
    expect(workbook.map((sheet) => sheet.name)).toEqual(["Results", "Results 2", "Results 3"]);
    const read = workbook.flatMap((sheet) => {
      expect(sheet.rows[0]).toEqual(["identifier", "activated"]);
      return sheet.rows.slice(1);
    });
    expect(read).toEqual(rows.map(([id, a]) => [id, a === "true"]));
  });

  it("writes the Summary sheet's tables after the rows, asked for once the rows are read", async () => {
    let read = 0;
    async function* counted() {
      yield ["identifier", "activated"];
      for (const row of [
        ["441", "true"],
        ["442", "false"],
      ]) {
        read++;
        yield row;
      }
    }
    const summary = (): SummaryTable[] => [
      {
        heading: ["Run", ""],
        rows: [
          ["Rows read before the summary", read],
          ["Charged", "$0.002"],
        ],
      },
      {
        heading: ["activated", "Rows"],
        rows: [
          ["true", 1],
          ["false", 1],
        ],
      },
    ];
    const [, sheet] = await readWorkbook(await bytesOf(renderXlsx(counted(), { summary })));
    expect(sheet!.name).toBe("Summary");
    expect(sheet!.rows).toEqual([
      ["Run", ""],
      ["Rows read before the summary", 2],
      ["Charged", "$0.002"],
      ["", ""],
      ["activated", "Rows"],
      ["true", 1],
      ["false", 1],
    ]);
  });

  it("fails with CELL_TOO_LONG for a value an Excel cell cannot hold", async () => {
    const long = "x".repeat(32_768);
    await expect(
      bytesOf(
        renderXlsx(
          rowsOf([
            ["identifier", "carrier"],
            ["441", "ok"],
            ["442", long],
          ]),
        ),
      ),
    ).rejects.toSatisfy((error) => error instanceof ResultFileError && error.code === "CELL_TOO_LONG" && /Row 3 /.test(error.message));
  });

  it("passes the table's own error on", async () => {
    async function* broken() {
      yield ["identifier", "activated"];
      yield ["441", "true"];
      throw new Error("connection reset");
    }
    await expect(bytesOf(renderXlsx(broken()))).rejects.toThrow("connection reset");
  });

  it("releases the table when the consumer stops reading", async () => {
    let released = false;
    async function* endless() {
      try {
        yield ["identifier", "activated"];
        for (let i = 0; ; i++) yield [String(447400000000 + i), "true"];
      } finally {
        released = true;
      }
    }
    for await (const chunk of renderXlsx(endless())) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    await expect.poll(() => released).toBe(true);
  });
});
