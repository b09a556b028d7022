/**
 * Bounds on what a result may hold and a zipped one expand to, and on the parts of an Excel
 * workbook alike; apart from zip.ts so that naming them does not load yauzl.
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
