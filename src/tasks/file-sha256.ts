import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** The sha256 of a file's bytes, in hex, read as a stream (source lists and staged results can be large); `signal` stops the reading. */
export async function fileSha256(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, signal ? { signal } : {})) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
