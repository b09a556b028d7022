import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { text as streamText } from "node:stream/consumers";
import yazl from "yazl";

/** A fresh directory under the OS temp dir, and a function removing it. */
export async function makeTempDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "bulkcheck-results-"));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** An opener for `data`, cut into `chunkSize`-byte chunks so sniffing crosses chunk boundaries. */
export function sourceOf(data: string | Buffer, chunkSize = 3): () => Promise<Readable> {
  const bytes = Buffer.from(data);
  return async () => {
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
    return Readable.from(chunks, { objectMode: false });
  };
}

/** An opener whose body delivers `data` and then fails like a dropped connection. */
export function failingSourceOf(data: string): () => Promise<Readable> {
  return async () =>
    Readable.from(
      (async function* () {
        yield Buffer.from(data);
        throw new Error("connection reset");
      })(),
      { objectMode: false },
    );
}

/** A zip holding `entries` (name → content), built by yazl in memory. */
export async function zipOf(entries: Record<string, string | Buffer>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(entries)) {
    if (name.endsWith("/")) zip.addEmptyDirectory(name);
    else zip.addBuffer(Buffer.from(content), name);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A writable collecting what is written; `text()` resolves once it is ended. */
export function collector(): { stream: PassThrough; text: () => Promise<string> } {
  const stream = new PassThrough();
  const result = streamText(stream);
  // A failed write destroys the stream; tests that never ask for the text must not see an unhandled rejection.
  result.catch(() => undefined);
  return { stream, text: () => result };
}

/** Renders every chunk of an async string generator into one string. */
export async function concatText(chunks: AsyncIterable<string>): Promise<string> {
  let out = "";
  for await (const chunk of chunks) out += chunk;
  return out;
}

/** The rows as an async iterable, the way writeRows receives them. */
export async function* rowsOf(rows: readonly (readonly string[])[]): AsyncGenerator<readonly string[]> {
  yield* rows;
}
