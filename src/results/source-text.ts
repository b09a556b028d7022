import { prefixed, readHead } from "./chunks.js";

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
