/** Server-side multipart parsing for tests, with busboy: parts in arrival order, files hashed as they stream. */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import busboy from "busboy";

export type Part =
  | { kind: "field"; name: string; value: string }
  | { kind: "file"; name: string; filename: string; mimeType: string; size: number; sha256: string; head: string };

export function readMultipart(req: IncomingMessage): Promise<Part[]> {
  return new Promise((resolve, reject) => {
    const parts: Part[] = [];
    const pending: Promise<void>[] = [];
    const parser = busboy({ headers: req.headers, limits: { fileSize: 200 * 1024 * 1024 } });
    parser.on("field", (name, value) => parts.push({ kind: "field", name, value }));
    parser.on("file", (name, stream, info) => {
      const index = parts.length;
      parts.push({ kind: "file", name, filename: info.filename ?? "", mimeType: info.mimeType, size: 0, sha256: "", head: "" });
      const hash = createHash("sha256");
      let size = 0;
      let head = "";
      pending.push(
        new Promise<void>((done, fail) => {
          stream.on("data", (chunk: Buffer) => {
            hash.update(chunk);
            if (head.length < 64) head += chunk.subarray(0, 64).toString("utf8");
            size += chunk.length;
          });
          stream.on("error", fail);
          stream.on("end", () => {
            parts[index] = {
              kind: "file",
              name,
              filename: info.filename ?? "",
              mimeType: info.mimeType,
              size,
              sha256: hash.digest("hex"),
              head: head.slice(0, 64),
            };
            done();
          });
        }),
      );
    });
    parser.on("error", reject);
    parser.on("close", () => {
      Promise.all(pending).then(() => resolve(parts), reject);
    });
    req.pipe(parser);
  });
}
