import { open } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { classifyCell, REASONS } from "../../src/prepare/classify.js";
import { prepare, tempDir } from "./helpers.js";

const MB = 1_000_000;
const fill = (pattern: string, length = MB) => pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);

/** Cells built to make a backtracking pattern run for minutes: 1 MB each. */
const HOSTILE: ReadonlyArray<[string, string]> = [
  ["spaces between two letters", "a" + fill(" ", MB - 2) + "b"],
  ["spaces before an extension", "+44 7400 123456" + fill(" ", MB - 20) + "x12"],
  ["digits", fill("7")],
  ["x after x", fill("x")],
  ["ext after ext", fill("ext ")],
  ["# after #", fill("#1")],
  ["quotes", fill('"')],
  ["spaces inside quotes", '"' + fill(" ", MB - 3) + '7"'],
  ["mixed junk", fill("+(0) 44-x ext. #1;,'\"tel:")],
  ["full-width digits and spaces", fill("７ ")],
];

describe("hostile cells", () => {
  it.each(HOSTILE)("classes a 1 MB cell of %s as invalid, too long to be a phone number", (_name, cell) => {
    expect(classifyCell(cell, { country: "GB" })).toEqual({ class: "invalid", reason: REASONS.tooLong });
  });

  it("reads a list of nothing but 1 MB spaces as blank rows", () => {
    expect(classifyCell(fill(" "), { country: "GB" }).class).toBe("blank");
  });

  it("prepares a 50 MB one-column file of such cells, and a number after them, within a generous bound", async () => {
    const path = join(await tempDir(), "hostile.txt");
    const file = await open(path, "w");
    for (let i = 0; i < 50; i++) await file.write(HOSTILE[i % HOSTILE.length]![1] + "\n");
    await file.write("+44 7400 123456\n");
    await file.close();
    const started = Date.now();
    const { summary, kept } = await prepare(path);
    // Linear cleaning takes a second or two here; the quadratic pattern it replaced took minutes on one such cell.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(kept).toEqual(["447400123456"]);
    expect(summary).toMatchObject({ rows_read: 51, invalid_cnt: 50 });
  }, 120_000);
});
