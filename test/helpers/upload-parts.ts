import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Chunk } from "../../src/tasks/submit.js";
import { tempDir } from "./cli.js";
import { gbList, identifier } from "./sandbox.js";

/** Upload files of `sizes` numbers each (distinct numbers throughout), as preparation writes them: one identifier per line. */
export function uploadParts(sizes: number[]): Chunk[] {
  const dir = tempDir();
  let offset = 0;
  return sizes.map((count, index) => {
    const text = gbList(count, offset)
      .map((number) => identifier(number) + "\n")
      .join("");
    offset += count;
    const path = join(dir, `part-${index}.txt`);
    writeFileSync(path, text);
    return { path, count, bytes: Buffer.byteLength(text), sha256: createHash("sha256").update(text).digest("hex") };
  });
}
