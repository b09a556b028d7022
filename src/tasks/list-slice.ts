import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { identifierKey } from "../spec/identifier-key.js";
import type { IdentifierSet } from "../spec/identifier-set.js";
import type { Chunk } from "./submit.js";

/** Which part of a prepared list a task was (from the journal). */
export interface ChunkRecord {
  index: number;
  of: number;
  count: number;
  sha256: string;
}

/**
 * Writes lines [start, end) of a list split into `of` balanced parts (sizes
 * differ by at most one, larger parts first, as preparation splits), and reports
 * whether they are exactly the bytes that were uploaded.
 */
export async function writeSlice(listPath: string, chunk: ChunkRecord, outputPath: string): Promise<Chunk | "changed"> {
  let total = 0;
  for await (const _line of lines(listPath)) total++;
  const base = Math.floor(total / chunk.of);
  const extra = total % chunk.of;
  const start = chunk.index * base + Math.min(chunk.index, extra);
  const end = start + base + (chunk.index < extra ? 1 : 0);
  let index = 0;
  const written = await writeLines(outputPath, async function* () {
    for await (const line of lines(listPath)) {
      if (index >= start && index < end) yield line;
      if (++index >= end) return;
    }
  });
  return matches(written, chunk) ? written : "changed";
}

/** Writes the identifiers of a list that have no row in `results` (header first, identifier first). */
export async function writeWithoutResults(
  listPath: string,
  results: AsyncIterable<readonly string[]> | undefined,
  outputPath: string,
): Promise<Chunk> {
  const resolved = new Set<string>();
  if (results) {
    let header = true;
    for await (const row of results) {
      if (!header && row[0]) resolved.add(row[0]);
      header = false;
    }
  }
  return writeKept(listPath, (identifier) => !resolved.has(identifier), outputPath);
}

/** Writes the identifiers of a list that `keep` says yes to, in the list's order. */
export function writeKept(listPath: string, keep: (identifier: string) => boolean, outputPath: string): Promise<Chunk> {
  return writeLines(outputPath, async function* () {
    for await (const line of lines(listPath)) if (keep(line)) yield line;
  });
}

export function matches(written: Chunk, chunk: ChunkRecord): boolean {
  return written.count === chunk.count && written.sha256 === chunk.sha256;
}

async function writeLines(path: string, source: () => AsyncIterable<string>): Promise<Chunk> {
  // The numbers themselves, in a private temp directory: readable by the user alone.
  const out = createWriteStream(path, { mode: 0o600 });
  const hash = createHash("sha256");
  let count = 0;
  let bytes = 0;
  for await (const identifier of source()) {
    const line = identifier + "\n";
    hash.update(line);
    count++;
    bytes += line.length;
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
  return { path, count, bytes, sha256: hash.digest("hex") };
}

/** Adds the identifiers of a prepared list or part to `into`. */
export async function addIdentifiers(listPath: string, into: IdentifierSet): Promise<void> {
  for await (const line of lines(listPath)) if (line) into.set(identifierKey(line), 0);
}

function lines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path), crlfDelay: Infinity });
}
