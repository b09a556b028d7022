import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { prepare, prepareText, tempDir } from "./helpers.js";

/** Bare DE cells valid only nationally: each votes national. */
const NATIONAL_VOTES = ["15123456701", "15123456702", "15123456703"];
const AMBIGUOUS = "4921 12345";

function deList(cells: readonly string[]): string {
  return ["phone", ...cells].join("\n") + "\n";
}

describe("prepareList decides ambiguous bare digit strings by the list's convention", () => {
  it("reads them with their calling code when no cell votes (a tie), in one pass", async () => {
    const { summary, kept, settings } = await prepareText("list.txt", deList([AMBIGUOUS, "+4915123456789"]), { country: "DE" });
    expect(kept).toEqual(["492112345", "4915123456789"]);
    expect(summary.ambiguous).toEqual({
      total: 1,
      international: 1,
      national: 0,
      resolved_by: "convention",
      votes: { international: 0, national: 0 },
    });
    expect(settings.digitsAs).toBe("international");
  });

  it("reads them nationally when most bare cells are written nationally, in a second exact pass", async () => {
    const rejectsPath = join(await tempDir(), "rejects.csv");
    const { summary, kept, settings } = await prepareText("list.txt", deList([AMBIGUOUS, ...NATIONAL_VOTES, AMBIGUOUS, "n/a"]), {
      country: "DE",
      rejectsPath,
    });
    expect(kept).toEqual(["49492112345", ...NATIONAL_VOTES.map((n) => "49" + n)]);
    expect(summary).toMatchObject({ kept: 4, duplicate_cnt: 1, invalid_cnt: 1, rows_read: 6, national_normalised: 4 });
    expect(summary.ambiguous).toEqual({
      total: 2,
      international: 0,
      national: 2,
      resolved_by: "convention",
      votes: { international: 0, national: 3 },
    });
    expect(settings.digitsAs).toBe("national");
    // The rejects of the first pass were replaced, not appended to.
    const rejects: string[][] = parse(await readFile(rejectsPath, "utf8"));
    expect(rejects.map((row) => row[2])).toEqual(["class", "duplicate", "invalid"]);
  });

  it("reads them as --digits-as says, whatever the votes, and says it was the flag", async () => {
    const { summary, kept } = await prepareText("list.txt", deList([AMBIGUOUS, ...NATIONAL_VOTES]), {
      country: "DE",
      digitsAs: "international",
    });
    expect(kept[0]).toBe("492112345");
    expect(summary.ambiguous).toMatchObject({ total: 1, international: 1, national: 0, resolved_by: "flag" });
  });

  it("counts votes of bare cells with the calling code, duplicates too, and keeps cells valid one way as they are", async () => {
    const cells = ["447400123456", "447400123456", "7400 123457", "07400 123458", "+44 7400 123459"];
    const { summary, kept } = await prepareText("list.txt", deList(cells), { country: "GB" });
    expect(summary.ambiguous.votes).toEqual({ international: 2, national: 1 });
    expect(kept).toEqual(["447400123456", "447400123457", "447400123458", "447400123459"]);
  });

  it("spools a stream before reading it twice, and removes the spooled copy", async () => {
    const text = deList([AMBIGUOUS, ...NATIONAL_VOTES]);
    const { kept, summary } = await prepare({ stream: Readable.from([Buffer.from(text)]), name: "stdin" }, { country: "DE" });
    expect(kept[0]).toBe("49492112345");
    expect(summary.ambiguous.national).toBe(1);
  });

  it("counts cells expanded from spreadsheet notation", async () => {
    const { summary, kept } = await prepareText("list.txt", deList(["1.5123456701E+10", "4.915E+11", "+49 151 23456702"]), {
      country: "DE",
    });
    expect(summary).toMatchObject({ spreadsheet_expanded: 1, invalid_cnt: 1, national_normalised: 1 });
    expect(kept).toEqual(["4915123456701", "4915123456702"]);
  });
});
