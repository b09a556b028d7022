import { createRequire } from "node:module";
import type * as Iconv from "iconv-lite";

/**
 * The encodings a list is read in and a joined file is written back in. `utf8-bom`
 * is UTF-8 that starts with a byte-order mark; UTF-16 is read after its mark.
 */
export type TextEncoding = "utf8" | "utf8-bom" | "utf16le" | "utf16be" | "windows-1252" | "latin1";

/** What `--encoding` accepts: a BOM of the named encoding is still recognised and kept. */
export const FORCEABLE_ENCODINGS = ["utf8", "utf16le", "utf16be", "windows-1252", "latin1"] as const;
export type ForcedEncoding = (typeof FORCEABLE_ENCODINGS)[number];

let iconv: typeof Iconv | undefined;

/** iconv-lite, loaded on first use: only lists in a legacy encoding need it. */
function iconvLite(): typeof Iconv {
  iconv ??= createRequire(import.meta.url)("iconv-lite") as typeof Iconv;
  return iconv;
}

/**
 * The five bytes Windows-1252 leaves unassigned. iconv-lite reads them as U+FFFD;
 * they are read instead as the C1 control of the same value (as the WHATWG
 * Encoding Standard does) and written back as that byte, so every byte of a
 * source survives the round trip.
 */
const UNASSIGNED_1252 = /[\x81\x8d\x8f\x90\x9d]/;

/** Decodes a chunk of a single-byte encoding: one character per byte, so chunks never split a character. */
export function decodeSingleByte(bytes: Buffer, encoding: "windows-1252" | "latin1"): string {
  if (encoding === "latin1") return bytes.toString("latin1");
  const text = iconvLite().decode(bytes, "windows-1252");
  if (!text.includes("\ufffd")) return text;
  let fixed = "";
  for (let i = 0; i < text.length; i++) fixed += text[i] === "\ufffd" ? String.fromCharCode(bytes[i]!) : text[i];
  return fixed;
}

/**
 * Text as bytes of `encoding` (no byte-order mark: see byteOrderMark). A character
 * the legacy encoding cannot hold becomes `?`, as iconv-lite writes it.
 */
export function encodeText(text: string, encoding: TextEncoding): Buffer {
  switch (encoding) {
    case "utf8":
    case "utf8-bom":
      return Buffer.from(text, "utf8");
    case "utf16le":
      return Buffer.from(text, "utf16le");
    case "utf16be":
      return iconvLite().encode(text, "utf-16be");
    case "latin1":
      return iconvLite().encode(text, "latin1");
    case "windows-1252":
      return encodeWindows1252(text);
  }
}

function encodeWindows1252(text: string): Buffer {
  if (!UNASSIGNED_1252.test(text)) return iconvLite().encode(text, "windows-1252");
  const parts = text.split(new RegExp(`(${UNASSIGNED_1252.source})`));
  return Buffer.concat(
    parts.map((part, i) => (i % 2 === 1 ? Buffer.from([part.charCodeAt(0)]) : iconvLite().encode(part, "windows-1252"))),
  );
}

/** The byte-order mark a file in `encoding` starts with (empty for none). */
export function byteOrderMark(encoding: TextEncoding): Buffer {
  switch (encoding) {
    case "utf8-bom":
      return Buffer.from([0xef, 0xbb, 0xbf]);
    case "utf16le":
      return Buffer.from([0xff, 0xfe]);
    case "utf16be":
      return Buffer.from([0xfe, 0xff]);
    default:
      return Buffer.alloc(0);
  }
}

/** The encodings a file can name by its byte-order mark. */
const MARKED_ENCODINGS = ["utf8-bom", "utf16le", "utf16be"] as const;

/** The encoding a byte-order mark at the start of `head` names (the marks byteOrderMark writes). */
export function byteOrderMarkOf(head: Buffer): TextEncoding | undefined {
  return MARKED_ENCODINGS.find((encoding) => {
    const mark = byteOrderMark(encoding);
    return head.subarray(0, mark.length).equals(mark);
  });
}
