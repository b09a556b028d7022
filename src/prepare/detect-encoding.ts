import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { byteOrderMarkOf, type TextEncoding } from "../csv/encodings.js";
import { completeUtf8Length } from "./decode.js";

/**
 * The encoding of a list file: the one its byte-order mark names, else UTF-8
 * when every byte of the file is valid UTF-8, else Windows-1252 (what Excel on
 * Windows saves as "CSV", and a superset of Latin-1 for printable text).
 *
 * The whole file is checked, not a prefix: an export may be ASCII for megabytes
 * before its first `Müller`. `buffer.isUtf8` reads ~GB/s, so this pass costs a
 * few milliseconds for a typical list. A UTF-8 mark is trusted: bad bytes after
 * it are reported, not guessed at. The scan stops at a NUL byte, which no list
 * holds (a binary file, UTF-16 without a mark): reading the list stops there too.
 */
export async function detectEncoding(path: string): Promise<TextEncoding> {
  let carry: Buffer = Buffer.alloc(0);
  let first = true;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 16 }) as AsyncIterable<Buffer>) {
    if (first) {
      first = false;
      const marked = byteOrderMarkOf(chunk);
      if (marked !== undefined) return marked;
    }
    const bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    // NUL is no text in any encoding: decoding stops there with its own error, so the scan can too.
    const nul = bytes.indexOf(0);
    const end = nul >= 0 ? nul : completeUtf8Length(bytes);
    if (!isUtf8(bytes.subarray(0, end))) return "windows-1252";
    if (nul >= 0) return "utf8";
    carry = bytes.subarray(end);
  }
  return carry.length === 0 || isUtf8(carry) ? "utf8" : "windows-1252";
}
