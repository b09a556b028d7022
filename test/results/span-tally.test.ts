import { describe, expect, it } from "vitest";
import { SpanTally } from "../../src/results/span-tally.js";
import { RowTally } from "../../src/results/tally.js";

describe("SpanTally", () => {
  it("counts carrier rows by their span exactly as row-by-row adding does", () => {
    const rows = [
      ["1", "EE", "EE", "mobile"],
      ["2", "O2", "Telefonica", "mobile"],
      ["3", "EE", "EE", "mobile"],
      ["4", "", "", ""],
      ["5"],
    ];
    const byRow = new RowTally("carrier_batch");
    for (const row of rows) byRow.add(row);
    const bySpan = new RowTally("carrier_batch");
    const spans = new SpanTally(bySpan);
    for (const row of rows) {
      const span = row.slice(1, 4).join(",");
      spans.add(span, 0, span.length);
    }
    spans.flush();
    expect(bySpan.result()).toEqual(byRow.result());
  });

  it("folds the same values into the overflow bucket as row-by-row adding, across flushes", () => {
    const byRow = new RowTally("carrier_batch", 3);
    const bySpan = new RowTally("carrier_batch", 3);
    const spans = new SpanTally(bySpan);
    for (let i = 0; i < 25_000; i += 1) {
      const carrier = `c${(i * 7919) % 12_000}`;
      byRow.add(["1", carrier, "", i % 2 ? "mobile" : "voip"]);
      const line = `x,${carrier},,${i % 2 ? "mobile" : "voip"},y`;
      spans.add(line, 2, line.length - 2);
    }
    spans.flush();
    expect(bySpan.result()).toEqual(byRow.result());
  });

  it("refuses to count again on an entry made stale by a flush", () => {
    const tally = new RowTally("carrier_batch");
    const spans = new SpanTally(tally);
    const entry = spans.add("EE,EE,mobile", 0, 12);
    expect(spans.repeat(entry)).toBe(true);
    spans.flush();
    expect(spans.repeat(entry)).toBe(false);
    expect(tally.result()).toMatchObject({ rows: 2 });
  });

  it("keeps parsed rows whose tallied fields hold commas apart from plain spans", () => {
    const byRow = new RowTally("carrier_batch");
    const bySpan = new RowTally("carrier_batch");
    const spans = new SpanTally(bySpan);
    for (const row of [["1", "AT&T, Inc.", "x", "mobile"], ["2", "AT&T", " Inc.", "x"]]) {
      byRow.add(row);
      spans.addRow(row);
    }
    spans.flush();
    expect(bySpan.result()).toEqual(byRow.result());
  });

  it("counts signal rows by the activated field alone", () => {
    const tally = new RowTally("number_activity_batch");
    const spans = new SpanTally(tally);
    for (const value of ["true", "false", "true", "", "yes"]) spans.add(`1,${value}\n`, 2, 2 + value.length);
    spans.flush();
    expect(tally.result()).toEqual({ rows: 5, signal: { true: 2, false: 1, other: 2 } });
  });
});
