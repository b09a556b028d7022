import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { httpStatusFor } from "./http-status.js";

/**
 * Bytes of an unread upload that are read and thrown away after an early answer
 * (slot, size or field errors) before the sandbox gives up and closes the socket.
 * Discarding instead of closing at once lets the client read the answer: closing
 * a socket with unread input makes the kernel send RST, which can destroy the
 * response before the client has read it.
 */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;

/** What malformed-after-commit sends as a task's created_at: a time that is no ISO 8601 timestamp. */
const MALFORMED_CREATED_AT = "yesterday at noon";

/**
 * One request and its response. Every answer goes through here, so the outcome
 * (envelope code, HTTP status or "dropped") and markers end up in the log line,
 * and an armed drop-after-commit fault turns any answer into a dropped socket (an armed
 * malformed-after-commit, a task's answer into one whose created_at is no timestamp).
 */
export class Exchange {
  private readonly startedAt = performance.now();
  private readonly markers: string[] = [];
  private outcome = "no-response";
  private dropResponse = false;
  private malformedTask = false;
  /**
   * How the result route sends the file: whole; its first half, then the socket dropped
   * (drop-mid-download); or whole, then blank lines until the client goes away (endless-download).
   */
  body: "whole" | "half" | "endless" = "whole";

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly path: string,
  ) {}

  /** True once the client is gone or the response has been sent. */
  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed || this.req.socket.destroyed;
  }

  mark(marker: string): void {
    this.markers.push(marker);
  }

  setOutcome(outcome: string): void {
    this.outcome = outcome;
  }

  /** The next answer destroys the socket instead (drop-after-commit). */
  armDropResponse(): void {
    this.dropResponse = true;
  }

  /** The next task answered carries a created_at that is no timestamp (malformed-after-commit). */
  armMalformedTask(): void {
    this.malformedTask = true;
  }

  /** Sends `{code, msg, data}` with the status from the HTTP status table (or `status`). */
  envelope(code: number, msg: string, data: object = {}, headers: OutgoingHttpHeaders = {}, status = httpStatusFor(code)): void {
    const sent = this.malformedTask && code === 0 && "created_at" in data ? { ...data, created_at: MALFORMED_CREATED_AT } : data;
    this.send(
      status,
      { "content-type": "application/json; charset=utf-8", ...headers },
      JSON.stringify({ code, msg, data: sent }),
      `code=${code}`,
    );
  }

  /** A storage-CDN style error: not an envelope. */
  xml(status: number, code: string, message: string): void {
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>\n`;
    this.send(status, { "content-type": "application/xml" }, body, `http=${status}`);
  }

  /** Sends a complete response with a known body, then discards any upload still arriving. */
  send(status: number, headers: OutgoingHttpHeaders, body: string, outcome: string): void {
    if (this.dropResponse) return this.drop();
    if (this.closed) return;
    this.outcome = outcome;
    this.res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) });
    this.res.end(body);
    this.discardUnreadBody();
  }

  /** Destroys the socket without (further) response. */
  drop(): void {
    this.outcome = "dropped";
    this.req.socket.destroy();
  }

  /** Runs `listener` once when the response is over: sent, dropped, or abandoned by the client. */
  onClose(listener: () => void): void {
    this.res.once("close", listener);
  }

  logLine(): string {
    const ms = Math.round(performance.now() - this.startedAt);
    const outcome = this.outcome === "no-response" && this.req.socket.destroyed ? "client-aborted" : this.outcome;
    return [this.req.method ?? "?", this.path, outcome, `${ms}ms`, ...this.markers].join(" ");
  }

  private discardUnreadBody(): void {
    if (this.req.complete) return;
    let discarded = 0;
    this.req.unpipe();
    this.req.removeAllListeners("data");
    this.req.on("data", (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DISCARD_LIMIT_BYTES) this.req.socket.destroy();
    });
    this.req.resume();
  }
}
