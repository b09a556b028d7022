import { isUtf8 } from "node:buffer";
import { byteOrderMark, byteOrderMarkOf, decodeSingleByte, type TextEncoding } from "../csv/encodings.js";
import { InputRejectedError } from "../errors.js";

export type { TextEncoding } from "../csv/encodings.js";

export interface DecodedText {
  encoding: TextEncoding;
  /** The text, BOM removed, in the chunks it arrived in. Throws UndecodableText on bad bytes. */
  chunks: AsyncGenerator<string, void, undefined>;
}

/**
 * Bytes that are not text in the detected encoding. `decoded` is the text of the
 * failing chunk before the problem, so the reader can name the line.
 */
export class UndecodableText extends Error {
  constructor(
    readonly problem: "invalid" | "nul",
    readonly encoding: TextEncoding,
    readonly decoded: string,
  ) {
    super(problem === "nul" ? "NUL character in text" : `invalid ${encoding} text`);
  }
}

const EXPORT_HINT = "Export the list as CSV UTF-8 (or Excel's Unicode text) and try again.";
const XLS_HINT = "Open it in Excel and save it as Excel Workbook (.xlsx) or CSV UTF-8 (without a password), then try again.";

/** File signatures people pass by mistake, with what to say about them (an .xlsx is read before text is decoded). */
const SIGNATURES: ReadonlyArray<{ bytes: readonly number[]; what: string; hint?: string }> = [
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: "a ZIP archive" },
  // OLE2: Excel 97–2003 workbooks, and password-protected .xlsx files, which Excel wraps the same way.
  { bytes: [0xd0, 0xcf, 0x11, 0xe0], what: "an old Excel workbook (.xls) or a password-protected one", hint: XLS_HINT },
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: "a PNG image" },
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], what: "a PDF document" },
  { bytes: [0x1f, 0x8b], what: "a gzip archive" },
];

/**
 * Decodes a list's bytes in `encoding` (see detectEncoding). A byte-order mark of
 * that encoding is dropped; with `utf8` a UTF-8 mark makes it `utf8-bom`. UTF-8
 * and UTF-16 must be valid; single-byte encodings decode every byte. Binary files
 * are refused by their signature, and NUL anywhere (UTF-16 read as UTF-8, or no
 * text at all): NUL never occurs in a list, and later stages rely on that.
 *
 * UTF-8 is validated with `buffer.isUtf8` and decoded with `Buffer#toString`
 * (~20× faster than a fatal TextDecoder), holding back a character split
 * between chunks.
 */
export async function decodeText(bytes: AsyncIterable<Uint8Array>, name: string, requested: TextEncoding): Promise<DecodedText> {
  const iterator = bytes[Symbol.asyncIterator]();
  let head: Buffer = Buffer.alloc(0);
  let done = false;
  while (head.length < 8 && !done) {
    const next = await iterator.next();
    if (next.done) done = true;
    else head = Buffer.concat([head, next.value]);
  }
  for (const signature of SIGNATURES) {
    if (signature.bytes.every((byte, i) => head[i] === byte)) {
      await iterator.return?.();
      throw new InputRejectedError(`${name} is ${signature.what}, not a text list.`, { hint: signature.hint ?? EXPORT_HINT });
    }
  }
  const [encoding, bomLength] = withByteOrderMark(requested, head);
  const decode = decoderFor(encoding);

  async function* chunks(): AsyncGenerator<string, void, undefined> {
    try {
      if (head.length > bomLength) yield decode(head.subarray(bomLength));
      if (!done) {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield decode(asBuffer(next.value));
      }
      const rest = decode(undefined);
      if (rest !== "") yield rest;
    } finally {
      await iterator.return?.();
    }
  }
  return { encoding, chunks: chunks() };
}

type ChunkDecoder = (chunk: Buffer | undefined) => string;

function decoderFor(encoding: TextEncoding): ChunkDecoder {
  switch (encoding) {
    case "utf8":
    case "utf8-bom":
      return utf8Decoder(encoding);
    case "utf16le":
    case "utf16be":
      return utf16Decoder(encoding);
    case "windows-1252":
    case "latin1":
      return (chunk) => (chunk === undefined ? "" : withoutNul(decodeSingleByte(chunk, encoding), encoding));
  }
}

function withoutNul(text: string, encoding: TextEncoding): string {
  const nul = text.indexOf("\0");
  if (nul >= 0) throw new UndecodableText("nul", encoding, text.slice(0, nul));
  return text;
}

function utf8Decoder(encoding: TextEncoding): ChunkDecoder {
  let carry: Buffer = Buffer.alloc(0);
  return (chunk) => {
    const bytes = chunk === undefined ? carry : carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const end = chunk === undefined ? bytes.length : completeUtf8Length(bytes);
    const whole = bytes.subarray(0, end);
    carry = bytes.subarray(end);
    if (!isUtf8(whole)) {
      const text = whole.toString("utf8");
      throw new UndecodableText("invalid", encoding, text.slice(0, Math.max(0, text.indexOf("\ufffd"))));
    }
    const nul = whole.indexOf(0);
    if (nul >= 0) throw new UndecodableText("nul", encoding, whole.subarray(0, nul).toString("utf8"));
    return whole.toString("utf8");
  };
}

function utf16Decoder(encoding: TextEncoding): ChunkDecoder {
  const decoder = new TextDecoder(encoding === "utf16le" ? "utf-16le" : "utf-16be", { fatal: true, ignoreBOM: true });
  return (chunk) => {
    let text: string;
    try {
      text = chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    } catch {
      throw new UndecodableText("invalid", encoding, "");
    }
    return withoutNul(text, encoding);
  };
}

/** Length of the prefix that does not end inside a multi-byte character. */
export function completeUtf8Length(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The encoding to decode in, and the length of its byte-order mark at the start of `head` (0 when none). */
function withByteOrderMark(encoding: TextEncoding, head: Buffer): [TextEncoding, number] {
  const bom = byteOrderMarkOf(head);
  if ((encoding === "utf8" || encoding === "utf8-bom") && bom === "utf8-bom") return ["utf8-bom", byteOrderMark(bom).length];
  if (encoding === "utf8-bom") return ["utf8", 0];
  if (bom === encoding) return [encoding, byteOrderMark(bom).length];
  return [encoding, 0];
}

/** The user-facing error for undecodable text found on `line`. */
export function undecodableError(name: string, failure: UndecodableText, line: number): InputRejectedError {
  const message =
    failure.problem === "nul"
      ? `${name} contains NUL characters (line ${line}): it is UTF-16 without a byte-order mark, or not text at all.`
      : `${name} is not ${failure.encoding.startsWith("utf16") ? "valid UTF-16" : "UTF-8"} text (bad bytes on line ${line}).`;
  return new InputRejectedError(message, { hint: EXPORT_HINT, cause: failure });
}
