/** Bounds on what a result may hold and a zipped one expand to; apart from zip.ts so that naming them does not load yauzl. */
export interface ZipLimits {
  /** Largest CSV accepted, zipped (uncompressed) or not, and largest zip spooled. */
  maxUncompressedBytes: number;
  /** Largest uncompressed/compressed ratio accepted for entries over 1 MiB; deflate tops out near 1032. */
  maxCompressionRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxUncompressedBytes: 4 * 1024 ** 3,
  maxCompressionRatio: 200,
};
