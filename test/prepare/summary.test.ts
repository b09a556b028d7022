import { describe, expect, it } from "vitest";
import { addSummaries, countRow, emptySummary } from "../../src/prepare/summary.js";

describe("addSummaries", () => {
  it("adds up two lists' counts, regions and ambiguous rows, and keeps the first list's encoding", () => {
    const first = emptySummary();
    countRow(first, { class: "kept", sharedRegion: "JE" });
    countRow(first, { class: "invalid" });
    countRow(first, { class: "kept", ambiguous: true });
    first.ambiguous = { total: 1, international: 1, national: 0, resolved_by: "convention", votes: { international: 2, national: 1 } };
    first.encoding = "windows-1252";
    const second = emptySummary();
    countRow(second, { class: "kept", sharedRegion: "JE" });
    countRow(second, { class: "blank" });
    second.ambiguous = { total: 3, international: 0, national: 3, resolved_by: "convention", votes: { international: 0, national: 4 } };

    const total = addSummaries([first, second]);
    expect(total).toMatchObject({ rows_read: 5, kept: 3, invalid_cnt: 1, blank: 1, submitted_lines: 4, shared_code_regions: { JE: 2 } });
    expect(total.ambiguous).toEqual({
      total: 4,
      international: 1,
      national: 3,
      resolved_by: "convention",
      votes: { international: 2, national: 5 },
    });
    expect(total.encoding).toBe("windows-1252");
  });

  it("gives an empty summary for no lists", () => {
    expect(addSummaries([])).toEqual(emptySummary());
  });
});
