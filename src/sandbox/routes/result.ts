import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import type { SandboxCore } from "../core.js";
import type { Exchange } from "../exchange.js";
import { resultFileName } from "../task-view.js";

const CONTENT_TYPE = { csv: "text/csv; charset=utf-8", zip: "application/zip" } as const;

/**
 * `GET /results/{id}.{csv|zip}?expires=&sig=`: a bearer link, no API key needed.
 * Answers like a storage CDN rather than the API: 404 NoSuchKey for an unknown
 * file, 403 SignatureDoesNotMatch or AccessDenied (expired) with an XML body. The
 * file is streamed from disk with a Content-Length; the drop-mid-download fault
 * sends the first half, then destroys the socket; the endless-download fault sends the
 * file without a Content-Length, then blank lines until the client goes away.
 */
export async function handleResult(ex: Exchange, core: SandboxCore, name: string, query: URLSearchParams): Promise<void> {
  const match = /^([0-9a-f]{32})\.(csv|zip)$/.exec(name);
  const task = match ? core.tasks.get(match[1]!) : undefined;
  if (!task || name !== resultFileName(task.id, core.options.resultFormat)) {
    return ex.xml(404, "NoSuchKey", "The specified key does not exist.");
  }
  const nowMs = core.options.now();
  const verdict = core.links.verify(name, query.get("expires"), query.get("sig"), nowMs);
  if (verdict === "bad-signature") return ex.xml(403, "SignatureDoesNotMatch", "The request signature does not match.");
  if (verdict === "expired") return ex.xml(403, "AccessDenied", "Request has expired");
  const phase = await core.tasks.observe(task, nowMs);
  if (phase.status !== "success") return ex.xml(404, "NoSuchKey", "The specified key does not exist.");
  const file = await core.files.file({
    id: task.id,
    ordinal: task.ordinal,
    product: task.product,
    createdAtMs: task.createdAtMs,
    prepared: phase.prepared,
  });
  if (ex.closed) return;
  ex.setOutcome("http=200");
  ex.res.writeHead(200, {
    "content-type": CONTENT_TYPE[core.options.resultFormat],
    ...(ex.body === "endless" ? {} : { "content-length": file.size }),
    "content-disposition": `attachment; filename="${name}"`,
    "cache-control": "private, max-age=0",
  });
  if (ex.req.method === "HEAD") return void ex.res.end();
  if (ex.body === "endless") {
    await pipeline(createReadStream(file.path), ex.res, { end: false }).catch(() => ex.drop());
    return pipeline(endlessBlankLines(), ex.res).catch(() => ex.drop());
  }
  if (ex.body === "half") {
    // Content-Length promises the whole file; end after half and close once it is flushed.
    ex.res.once("finish", () => ex.drop());
    return pipeline(createReadStream(file.path, { start: 0, end: Math.max(0, Math.floor(file.size / 2) - 1) }), ex.res).catch(() =>
      ex.drop(),
    );
  }
  await pipeline(createReadStream(file.path), ex.res).catch(() => ex.drop());
}

/** Blank lines without end (64 KiB at a time, as fast as the client reads them): a reader that skips them never sees a row. */
function* endlessBlankLines(): Generator<Buffer> {
  const lines = Buffer.alloc(64 * 1024, "\n");
  for (;;) yield lines;
}
