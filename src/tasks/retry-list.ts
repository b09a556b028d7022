import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Chunk } from "./submit.js";

export interface RetryListInput {
  /** The whole kept list of the source, one identifier per line, as preparation wrote it. */
  uploadList: string;
  /** Which part of that list the task was (from the journal). */
  chunk: { index: number; of: number; count: number; sha256: string };
  /** The task's result rows (header first); absent for a failed task, where nothing has a result. */
  results?: AsyncIterable<readonly string[]>;
  outputPath: string;
}

/**
 * Writes the numbers of a task's upload that have no result. The task's slice of
 * the kept list is found the way preparation split it (balanced parts) and its
 * hash must equal what was uploaded; otherwise the source has changed.
 */
export async function unresolvedNumbers(input: RetryListInput): Promise<Chunk | "source-changed"> {
  const resolved = new Set<string>();
  if (input.results) {
    let header = true;
    for await (const row of input.results) {
      if (!header && row[0]) resolved.add(row[0]);
      header = false;
    }
  }
  const out = createWriteStream(input.outputPath);
  const uploaded = createHash("sha256");
  const hash = createHash("sha256");
  let uploadedCount = 0;
  let count = 0;
  let bytes = 0;
  for await (const identifier of sliceOf(input.uploadList, input.chunk)) {
    const line = identifier + "\n";
    uploaded.update(line);
    uploadedCount++;
    if (resolved.has(identifier)) continue;
    hash.update(line);
    count++;
    bytes += line.length;
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
  if (uploadedCount !== input.chunk.count || uploaded.digest("hex") !== input.chunk.sha256) return "source-changed";
  return { path: input.outputPath, count, bytes, sha256: hash.digest("hex") };
}

/** Lines [start, start + count) of the list, where part sizes differ by at most one (larger parts first). */
async function* sliceOf(path: string, chunk: RetryListInput["chunk"]): AsyncGenerator<string> {
  let total = 0;
  for await (const _line of lines(path)) total++;
  const base = Math.floor(total / chunk.of);
  const extra = total % chunk.of;
  const start = chunk.index * base + Math.min(chunk.index, extra);
  const end = start + base + (chunk.index < extra ? 1 : 0);
  let index = 0;
  for await (const line of lines(path)) {
    if (index >= start && index < end) yield line;
    if (++index >= end) return;
  }
}

function lines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path), crlfDelay: Infinity });
}
