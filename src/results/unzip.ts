import type { Readable } from "node:stream";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import { ResultFileError } from "./errors.js";

/**
 * Bounds on what a result may hold and a zipped one expand to, and on the parts of an Excel
 * workbook alike.
 */
export interface ZipLimits {
  /** Largest CSV accepted, zipped (uncompressed) or not, and largest zip spooled; for a workbook, its largest part. */
  maxUncompressedBytes: number;
  /** Largest uncompressed/compressed ratio accepted for entries over 1 MiB; deflate tops out near 1032. */
  maxCompressionRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxUncompressedBytes: 4 * 1024 ** 3,
  maxCompressionRatio: 200,
};

/** Small entries are exempt from the ratio check: a tiny, repetitive file compresses well and harms nobody. */
const RATIO_CHECK_FLOOR = 1024 * 1024;

/** What a zip's central directory says of an entry (yauzl's Entry has these). */
export interface ZipEntrySizes {
  fileName: string;
  uncompressedSize: number;
  compressedSize: number;
}

/**
 * Why inflating `entry` would break `limits` (naming the entry, without a full stop), or undefined when
 * it may be inflated. The sizes are the ones the zip declares; a reader must also stop a
 * stream that inflates past its declared size (yauzl's `validateEntrySizes`).
 */
export function zipEntryOverLimits(entry: ZipEntrySizes, limits: ZipLimits): string | undefined {
  const size = entry.uncompressedSize;
  if (size > limits.maxUncompressedBytes) {
    return `${entry.fileName} would expand to ${size} bytes, over the ${limits.maxUncompressedBytes}-byte limit`;
  }
  const ratio = size / Math.max(1, entry.compressedSize);
  if (size > RATIO_CHECK_FLOOR && ratio > limits.maxCompressionRatio) {
    return `${entry.fileName} expands ${Math.round(ratio)}-fold, over the ${limits.maxCompressionRatio}-fold limit; it looks like a zip bomb`;
  }
  return undefined;
}

export type EntryKind = "directory" | "junk" | "csv" | "other";

/**
 * What a zip entry name is, judged from the name alone (it is never used as a path).
 * Junk is what archivers add on their own: `__MACOSX/` resource forks, `._` AppleDouble
 * files, `.DS_Store`, `Thumbs.db`.
 */
export function entryKind(fileName: string): EntryKind {
  if (fileName.endsWith("/")) return "directory";
  const base = fileName.slice(fileName.lastIndexOf("/") + 1);
  if (fileName.startsWith("__MACOSX/") || base.startsWith("._") || base === ".DS_Store" || base === "Thumbs.db") {
    return "junk";
  }
  return base.toLowerCase().endsWith(".csv") ? "csv" : "other";
}

/** yauzl's own file-name checks (absolute paths, `..`, backslashes) produce these messages. */
const UNSAFE_NAME = /^(invalid relative path|absolute path|invalid characters in fileName)/;

function asZipError(error: unknown): ResultFileError {
  if (error instanceof ResultFileError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return UNSAFE_NAME.test(message)
    ? new ResultFileError("ZIP_UNSAFE_NAME", `The zipped result has an unsafe entry name (${message}).`, { cause: error })
    : new ResultFileError("ZIP_INVALID", `The zipped result cannot be read: ${message}.`, { cause: error });
}

/** Finds the one CSV entry, refusing zero, several, and anything that decodes as a zip bomb. */
async function findCsvEntry(zip: ZipFile, limits: ZipLimits): Promise<Entry> {
  let found: Entry | undefined;
  const others: string[] = [];
  for await (const entry of zip.eachEntry()) {
    const kind = entryKind(entry.fileName);
    if (kind === "other") others.push(entry.fileName);
    if (kind !== "csv") continue;
    if (found) {
      throw new ResultFileError(
        "ZIP_MANY_CSV",
        `The zipped result holds more than one CSV (${found.fileName}, ${entry.fileName}); expected exactly one.`,
      );
    }
    found = entry;
  }
  if (!found) {
    const seen = others.length > 0 ? ` (found: ${others.join(", ")})` : "";
    throw new ResultFileError("ZIP_NO_CSV", `The zipped result holds no CSV file${seen}.`);
  }
  checkEntry(found, limits);
  return found;
}

function checkEntry(entry: Entry, limits: ZipLimits): void {
  if (entry.isEncrypted() || !entry.canDecodeFileData()) {
    throw new ResultFileError(
      "ZIP_ENCRYPTED",
      `${entry.fileName} in the zipped result is encrypted or uses an unsupported compression method.`,
    );
  }
  const overLimits = zipEntryOverLimits(entry, limits);
  if (overLimits !== undefined) throw new ResultFileError("ZIP_TOO_LARGE", `${overLimits}.`);
}

/**
 * Opens the single CSV inside a zip file on disk. yauzl checks entry names and, with
 * `validateEntrySizes`, stops a stream that inflates past the size its entry
 * declares, so the declared size checked here bounds what is read.
 * @throws ResultFileError for an unreadable zip, an unsafe name, no CSV or several, an
 *   encrypted entry, or a size over the limits.
 */
export async function openZippedCsv(path: string, limits: ZipLimits): Promise<{ entryName: string; stream: Readable; close(): void }> {
  let zip: ZipFile | undefined;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
    const entry = await findCsvEntry(zip, limits);
    const stream = await zip.openReadStreamPromise(entry);
    const opened = zip;
    return {
      entryName: entry.fileName,
      stream,
      close: () => {
        stream.destroy();
        opened.close();
      },
    };
  } catch (error) {
    zip?.close();
    throw asZipError(error);
  }
}
