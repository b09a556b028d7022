import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { identifierBatches } from "../../src/ledger/reuse.js";
import { numbersOf } from "../../src/run/part-keys.js";
import { tempDir } from "../helpers/cli.js";

async function read(text: string): Promise<number[]> {
  const path = join(tempDir(), "list.txt");
  writeFileSync(path, text);
  const numbers: number[] = [];
  for await (const batch of identifierBatches(path)) numbers.push(...batch);
  return numbers;
}

describe("the identifiers of a prepared list", () => {
  it("are its lines' numbers in order, blank lines skipped, the last line read without its newline", async () => {
    expect(await read("447400100001\n\n12025550123\n447400100002")).toEqual([447400100001, 12025550123, 447400100002]);
    expect(await read("")).toEqual([]);
    // The largest an E.164 number can be, exactly.
    expect(await read("999999999999999\n")).toEqual([999999999999999]);
  });

  it("read a line that is not digits as NaN, as Number() does", async () => {
    expect(await read("4474001x0001\n447400100002\n")).toEqual([Number.NaN, 447400100002]);
  });

  it("are whole across the reads of a file of several megabytes, a number split between two reads included", async () => {
    const numbers = Array.from({ length: 300_000 }, (_, i) => 447400000000 + i * 7);
    const path = join(tempDir(), "big.txt");
    writeFileSync(path, `${numbers.join("\n")}\n`);
    expect(Array.from(await numbersOf(path))).toEqual(numbers);
  });
});
