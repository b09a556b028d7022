import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { prefixed, readHead } from "./chunks.js";
import { ResultFileError } from "./errors.js";
import type { TempFiles } from "./temp-files.js";
import type { ZipLimits } from "./zip-limits.js";

/** Local file header signature: every zip starts with these bytes. */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Whether a body's first bytes are a zip's, whatever the URL or content-type say. */
export function isZipMagic(head: Buffer): boolean {
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
}

/**
 * Stops once more than `max` bytes of a result have gone by: results are written to
 * disk as they arrive (a zip spooled, a CSV written out or staged), so an endless body
 * would fill it.
 * @throws ResultFileError `ZIP_TOO_LARGE` for a zip, `RESULT_TOO_LARGE` for anything else.
 */
export async function* capped(chunks: AsyncIterable<Buffer>, max: number, zipped = false): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > max) {
      throw new ResultFileError(
        zipped ? "ZIP_TOO_LARGE" : "RESULT_TOO_LARGE",
        `The ${zipped ? "zipped result" : "result"} is larger than ${max} bytes, more than bulkcheck takes from a result; nothing was written.`,
      );
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
    const stream = Readable.from(capped(prefixed(head, rest), options.maxUncompressedBytes), { objectMode: false });
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
      capped(prefixed(head, rest), options.maxUncompressedBytes, true),
      createWriteStream(options.spoolPath, { flags: "wx", mode: 0o600 }),
      {
        signal: options.signal,
      },
    );
    // yauzl is loaded only when a result actually comes zipped.
    const { openZippedCsv } = await import("./zip.js");
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
