/**
 * Helpers for peeking at the start of a byte stream and then reading it whole:
 * a result's first bytes decide how the rest is read (zip or CSV, UTF-8 or UTF-16).
 */

function toBuffer(chunk: unknown): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
}

/**
 * Reads chunks until `enough(latestChunk, bytesSoFar)` holds or the stream ends, and
 * returns them joined. A download may deliver its first bytes one at a time, so the
 * test sees each chunk as it arrives rather than the joined head.
 */
export async function readHead(chunks: AsyncIterator<unknown>, enough: (chunk: Buffer, total: number) => boolean): Promise<Buffer> {
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
export async function* prefixed(head: Buffer, rest: AsyncIterator<unknown>): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield toBuffer(next.value);
}
