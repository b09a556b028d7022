import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { rm, type FileHandle } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { asOutputWriteError } from "../file-system-errors.js";
import { MAX_NUMERIC_IDENTIFIER_BYTES, writeIdentifier, type IdentifierKey } from "../spec/identifier-key.js";
import { openOutput } from "./output-file.js";

export interface UploadChunk {
  path: string;
  /** Identifiers in the file (one per line). */
  count: number;
  bytes: number;
  /** Hex SHA-256 of the file's bytes; the CLI derives the chunk's idempotency key from it. */
  sha256: string;
  /** Under `--country auto`: the country whose task checks these numbers. */
  country?: string;
}

/** Where upload files go: one named file (split files are named after it), or a directory and a base name. */
export type UploadTarget = { file: string } | { dir: string; base: string };

const BUFFER_BYTES = 256 * 1024;

/**
 * The upload list, written while the list is read: each kept identifier is
 * appended (one per line, `\n` endings) the moment it is first seen, so
 * first-seen order costs no memory. Above `maxTaskSize` the finished file is
 * then split into the fewest files that fit, balanced (sizes differ by at most
 * one) so no file falls below the service's minimum task size just because it
 * is the remainder. Paths: `list.txt`, or when split `list-1-of-3.txt`, ….
 */
export class UploadSpool {
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private used = 0;
  private readonly full: Buffer[] = [];
  private count = 0;

  private constructor(
    private readonly target: UploadTarget,
    private readonly file: HashedFile,
  ) {}

  static async create(target: UploadTarget): Promise<UploadSpool> {
    return new UploadSpool(target, await HashedFile.open(chunkPath(target, 1, 1), modeFor(target)));
  }

  /** Appends one identifier; written out by the next flush. */
  add(key: IdentifierKey): void {
    const room = typeof key === "string" ? key.length + 1 : MAX_NUMERIC_IDENTIFIER_BYTES + 1;
    if (this.used + room > this.buffer.length) {
      this.full.push(this.buffer.subarray(0, this.used));
      this.buffer = Buffer.allocUnsafe(Math.max(BUFFER_BYTES, room));
      this.used = 0;
    }
    this.used = writeIdentifier(this.buffer, this.used, key);
    this.buffer[this.used++] = 10;
    this.count++;
  }

  /** Writes the filled buffers, keeping memory bounded by what one block of rows keeps. */
  async flush(): Promise<void> {
    for (const buffer of this.full.splice(0)) await this.file.write(buffer);
  }

  /** Completes the file and splits it when it holds more than `maxTaskSize` identifiers. */
  async finish(maxTaskSize: number | undefined): Promise<UploadChunk[]> {
    await this.flush();
    await this.file.write(this.buffer.subarray(0, this.used));
    const whole = await this.file.finish(this.count);
    const sizes = balancedSizes(whole.count, maxTaskSize);
    if (sizes.length === 1) return [whole];
    const chunks = await splitLines(whole.path, sizes, (part) => chunkPath(this.target, part + 1, sizes.length), modeFor(this.target));
    await rm(whole.path, { force: true });
    return chunks;
  }

  /** Removes the partial file after a failure. */
  async discard(): Promise<void> {
    await this.file.close();
    await rm(this.file.path, { force: true });
  }
}

/**
 * An upload file copied into `target` as the parts UploadSpool would make of the same
 * identifiers (same names, same bytes), in one pass over its bytes: for a list whose every
 * number is uploaded, nothing needs reading number by number again. The file itself stays.
 */
export async function splitUploadFile(whole: UploadChunk, target: UploadTarget, maxTaskSize: number | undefined): Promise<UploadChunk[]> {
  const sizes = balancedSizes(whole.count, maxTaskSize);
  return splitLines(whole.path, sizes, (part) => chunkPath(target, part + 1, sizes.length), modeFor(target));
}

/** The fewest part sizes of at most `maxTaskSize` for `count` identifiers, differing by one at most. */
function balancedSizes(count: number, maxTaskSize: number | undefined): number[] {
  const parts = maxTaskSize === undefined ? 1 : Math.max(1, Math.ceil(count / maxTaskSize));
  return Array.from({ length: parts }, (_, part) => Math.floor(count / parts) + (part < count % parts ? 1 : 0));
}

/** A directory target is a private temp directory: the numbers staged there are readable by the user alone. */
function modeFor(target: UploadTarget): number {
  return "dir" in target ? 0o600 : 0o666;
}

function chunkPath(target: UploadTarget, part: number, parts: number): string {
  const file = "file" in target ? target.file : join(target.dir, `${target.base}.txt`);
  if (parts === 1) return file;
  const ext = extname(file);
  return join(dirname(file), `${basename(file, ext)}-${part}-of-${parts}${ext}`);
}

/** An upload file being written, its bytes counted and hashed as they go. */
class HashedFile {
  private readonly hash = createHash("sha256");
  private bytes = 0;

  private constructor(
    readonly path: string,
    private handle: FileHandle | undefined,
  ) {}

  static async open(path: string, mode: number): Promise<HashedFile> {
    return new HashedFile(path, await openOutput(path, "upload file", mode));
  }

  /**
   * Writes all of `buffer`: a disk that is filling up writes part of it, and only the
   * next write says why.
   * @throws FileSystemError naming the file when the file system refuses the write (no space, a quota).
   */
  async write(buffer: Buffer): Promise<void> {
    this.hash.update(buffer);
    this.bytes += buffer.length;
    try {
      for (let written = 0; written < buffer.length;) written += (await this.handle!.write(buffer, written)).bytesWritten;
    } catch (error) {
      throw asOutputWriteError(error, this.path);
    }
  }

  /** Closes the file; closing again does nothing. */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  /** Closes the file and describes it as holding `count` identifiers. */
  async finish(count: number): Promise<UploadChunk> {
    await this.close();
    return { path: this.path, count, bytes: this.bytes, sha256: this.hash.digest("hex") };
  }
}

/** Streams `path` into files of `sizes[i]` lines each, named by `pathOf(i)`. */
async function splitLines(path: string, sizes: readonly number[], pathOf: (part: number) => string, mode: number): Promise<UploadChunk[]> {
  const chunks: UploadChunk[] = [];
  let part: HashedFile | undefined;
  let lines = 0;
  try {
    for await (const data of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      let from = 0;
      while (from < data.length) {
        part ??= await HashedFile.open(pathOf(chunks.length), mode);
        const size = sizes[chunks.length]!;
        let at = from;
        while (lines < size && at < data.length) {
          const end = data.indexOf(10, at);
          // A line the next read completes: its newline is counted there.
          if (end === -1) at = data.length;
          else {
            at = end + 1;
            lines++;
          }
        }
        await part.write(data.subarray(from, at));
        from = at;
        if (lines === size) {
          chunks.push(await part.finish(lines));
          part = undefined;
          lines = 0;
        }
      }
    }
  } finally {
    await part?.close();
  }
  return chunks;
}
