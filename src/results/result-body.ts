import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ResultFileError } from "./errors.js";
import type { TempFiles } from "./temp-files.js";
import { openZippedCsv, type ZipLimits } from "./unzip.js";

/*
 * A result's body, from the first bytes that arrive to text: capped in size, unzipped
 * when it came as a zip (whatever the URL or content-type say), and decoded as UTF-8 or
 * UTF-16LE. The first bytes decide how the rest is read.
 */

/** Local file header signature: every zip starts with these bytes. */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Whether a body's first bytes are a zip's, whatever the URL or content-type say. */
function isZipMagic(head: Buffer): boolean {
  return head.length >= ZIP_MAGIC.length && head.subarray(0, ZIP_MAGIC.length).equals(ZIP_MAGIC);
}

/** The CSV bytes of one result, whether it came as CSV or inside a zip. */
export interface ResultBody {
  container: "csv" | "zip";
  /** Name of the CSV entry inside a zip (for messages only; never used as a path). */
  entryName?: string;
  stream: Readable;
  /** Releases the body: destroys the stream, closes the zip, removes the spool file. */
  close(): Promise<void>;
}

export interface BodyOptions extends ZipLimits {
  /** Where a zip body is spooled, a path the caller chose (a temp name next to the destination). */
  spoolPath: string;
  temps: TempFiles;
  signal?: AbortSignal;
  /** What the message of a result over `maxUncompressedBytes` says of it (see ResultCap). */
  cap?: Pick<ResultCap, "numbers" | "label">;
}

/** How much of a result `capped` lets by, and what the message says of it. */
export interface ResultCap {
  max: number;
  /** The body is a zip (spooled before it is read). */
  zipped?: boolean;
  /** The task's numbers, when `max` is what a result of that many can hold (see resultBytesBound). */
  numbers?: number;
  /** Names the result in the message, e.g. "task 3f…". */
  label?: string;
}

/**
 * Stops once more than `max` bytes of a result have gone by: results are written to
 * disk as they arrive (a zip spooled, a CSV written out or staged), so an endless body
 * would fill it.
 * @throws ResultFileError `ZIP_TOO_LARGE` for a zip, `RESULT_TOO_LARGE` for anything else.
 */
export async function* capped(chunks: AsyncIterable<Buffer>, cap: ResultCap): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > cap.max) {
      const what = `${cap.zipped ? "zipped result" : "result"}${cap.label === undefined ? "" : ` of ${cap.label}`}`;
      const most =
        cap.numbers === undefined ? "more than bulkcheck takes from a result" : `more than a result of ${cap.numbers} number(s) can hold`;
      throw new ResultFileError(cap.zipped ? "ZIP_TOO_LARGE" : "RESULT_TOO_LARGE", `The ${what} is larger than ${cap.max} bytes, ${most}.`);
    }
    yield chunk;
  }
}

/**
 * Reads the first bytes of a downloaded result and hands back its CSV bytes. A CSV
 * body streams straight through. A zip body (recognised by its magic bytes) is spooled
 * to `spoolPath` first, because the zip directory sits at the end and yauzl needs
 * random access; the spool is registered in `temps` and removed by `close()`.
 */
export async function openResultBody(source: Readable, options: BodyOptions): Promise<ResultBody> {
  const rest = source[Symbol.asyncIterator]();
  const head = await readHead(rest, (_chunk, total) => total >= ZIP_MAGIC.length);
  if (!isZipMagic(head)) {
    const stream = Readable.from(capped(prefixed(head, rest), { ...options.cap, max: options.maxUncompressedBytes }), {
      objectMode: false,
    });
    return {
      container: "csv",
      stream,
      close: () => {
        stream.destroy();
        source.destroy();
        return Promise.resolve();
      },
    };
  }
  options.temps.add(options.spoolPath);
  try {
    await pipeline(
      capped(prefixed(head, rest), { ...options.cap, max: options.maxUncompressedBytes, zipped: true }),
      createWriteStream(options.spoolPath, { flags: "wx", mode: 0o600 }),
      {
        signal: options.signal,
      },
    );
    const zipped = await openZippedCsv(options.spoolPath, options);
    return {
      container: "zip",
      entryName: zipped.entryName,
      stream: zipped.stream,
      close: async () => {
        zipped.close();
        await options.temps.remove(options.spoolPath);
      },
    };
  } catch (error) {
    source.destroy();
    await options.temps.remove(options.spoolPath);
    throw error;
  }
}

const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
/** A line longer than this is passed on in pieces as it arrives, so a file without line ends is never held whole. */
const MAX_PENDING_CHARS = 1 << 16;

/**
 * A result's bytes as text, in pieces that each end just after a line feed, except the
 * last piece and the pieces of a very long line. The text is UTF-8, or UTF-16LE after
 * that byte-order mark; the BOM is dropped and invalid bytes become U+FFFD.
 */
export async function* textPieces(bytes: AsyncIterable<unknown>): AsyncGenerator<string> {
  const chunks = bytes[Symbol.asyncIterator]();
  const head = await readHead(chunks, (_chunk, total) => total >= UTF16LE_BOM.length);
  const decoder = new TextDecoder(head.subarray(0, UTF16LE_BOM.length).equals(UTF16LE_BOM) ? "utf-16le" : "utf-8");
  let pending = "";
  for await (const chunk of prefixed(head, chunks)) {
    const text = pending + decoder.decode(chunk, { stream: true });
    const end = text.lastIndexOf("\n") + 1;
    if (end === 0 && text.length <= MAX_PENDING_CHARS) {
      pending = text;
      continue;
    }
    const cut = end === 0 ? text.length : end;
    pending = text.slice(cut);
    yield text.slice(0, cut);
  }
  const last = pending + decoder.decode();
  if (last !== "") yield last;
}

/* Peeking at the start of a byte stream, then reading it whole. */

function toBuffer(chunk: unknown): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
}

/**
 * Reads chunks until `enough(latestChunk, bytesSoFar)` holds or the stream ends, and
 * returns them joined. A download may deliver its first bytes one at a time, so the
 * test sees each chunk as it arrives rather than the joined head.
 */
async function readHead(chunks: AsyncIterator<unknown>, enough: (chunk: Buffer, total: number) => boolean): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for (;;) {
    const next = await chunks.next();
    if (next.done) break;
    const chunk = toBuffer(next.value);
    parts.push(chunk);
    total += chunk.length;
    if (enough(chunk, total)) break;
  }
  return Buffer.concat(parts);
}

/** Yields `head`, then whatever is left of `rest`. */
async function* prefixed(head: Buffer, rest: AsyncIterator<unknown>): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield toBuffer(next.value);
}
