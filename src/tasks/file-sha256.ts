import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** The sha256 of a file's bytes, in hex, read as a stream (source lists and staged results can be large). */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
