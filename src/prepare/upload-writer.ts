import { createHash } from "node:crypto";
import { basename, dirname, extname, join } from "node:path";
import { openOutput } from "./output-file.js";

export interface UploadChunk {
  path: string;
  /** Identifiers in the file (one per line). */
  count: number;
  bytes: number;
  /** Hex SHA-256 of the file's bytes; the CLI derives the chunk's idempotency key from it. */
  sha256: string;
}

/** Where upload files go: one named file (split files are named after it), or a directory and a base name. */
export type UploadTarget = { file: string } | { dir: string; base: string };

const LINES_PER_WRITE = 65_536;

/**
 * Writes the upload list: one identifier per line, `\n` endings, first-seen order.
 * Above `maxTaskSize` the list is split into the fewest files that fit, balanced
 * (sizes differ by at most one) so no file falls below the service's minimum
 * task size just because it is the remainder. Always writes at least one file,
 * which is empty when nothing was kept. Paths: `list.txt`, or when split
 * `list-1-of-3.txt`, `list-2-of-3.txt`, ….
 */
export async function writeUploadChunks(
  lines: (from: number, to: number) => Buffer,
  total: number,
  target: UploadTarget,
  maxTaskSize: number | undefined,
): Promise<UploadChunk[]> {
  const parts = maxTaskSize === undefined ? 1 : Math.max(1, Math.ceil(total / maxTaskSize));
  const chunks: UploadChunk[] = [];
  let from = 0;
  for (let part = 0; part < parts; part++) {
    const count = Math.floor(total / parts) + (part < total % parts ? 1 : 0);
    chunks.push(await writeChunk(chunkPath(target, part + 1, parts), lines, from, count));
    from += count;
  }
  return chunks;
}

function chunkPath(target: UploadTarget, part: number, parts: number): string {
  const file = "file" in target ? target.file : join(target.dir, `${target.base}.txt`);
  if (parts === 1) return file;
  const ext = extname(file);
  return join(dirname(file), `${basename(file, ext)}-${part}-of-${parts}${ext}`);
}

async function writeChunk(path: string, lines: (from: number, to: number) => Buffer, from: number, count: number): Promise<UploadChunk> {
  const hash = createHash("sha256");
  const handle = await openOutput(path, "upload file");
  let bytes = 0;
  try {
    for (let start = from; start < from + count; start += LINES_PER_WRITE) {
      const buffer = lines(start, Math.min(start + LINES_PER_WRITE, from + count));
      hash.update(buffer);
      bytes += buffer.length;
      await handle.write(buffer);
    }
  } finally {
    await handle.close();
  }
  return { path, count, bytes, sha256: hash.digest("hex") };
}
