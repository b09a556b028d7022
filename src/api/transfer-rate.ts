import { pipeline, Transform, type Readable } from "node:stream";
import { formatDuration } from "./attempts.js";

/**
 * The slowest a result file may arrive: 1 KiB/s, judged over each window of the body
 * deadline (--request-timeout, 60 s by default). The same rule as curl's
 * --speed-limit/--speed-time.
 *
 * Why a rate and not a whole-body deadline: result files run from a few kilobytes to
 * hundreds of megabytes, so no single deadline fits both a large file on a slow link
 * and a small one from a stalled server, while a rate scales with the file. Undici's
 * body timeout bounds only silence between chunks, which a server sending one byte
 * every 2 s never breaks: such a download ran for as long as anyone let it. 1 KiB/s
 * (8 kbit/s) is below any link that works (a 20 MB result would take 5.7 hours at
 * it) and some 2,000 times above that drip, so a slow transfer is never mistaken for
 * a stalled one and a stalled one is given up within one or two windows.
 */
export const MIN_TRANSFER_BYTES_PER_SECOND = 1024;

/** A result file that kept arriving, but too slowly to ever finish (a broken transfer, restarted from a fresh link). */
export class TransferTooSlowError extends Error {
  readonly code = "ERR_BULKCHECK_TRANSFER_TOO_SLOW";

  constructor(bytes: number, windowMs: number) {
    super(
      `only ${bytes} bytes of the result file arrived in ${formatDuration(windowMs)}, below the minimum of ${MIN_TRANSFER_BYTES_PER_SECOND / 1024} KiB/s`,
    );
  }
}

/**
 * `body` as it arrives, failed with TransferTooSlowError (and the connection closed)
 * when fewer than MIN_TRANSFER_BYTES_PER_SECOND × `windowMs` bytes arrive in a window.
 * A window in which the reader held the bytes back (a slow disk, a paused pipe) is not
 * counted against the server: as with undici's body timeout, only the sender is judged.
 */
export function withMinimumRate(body: Readable, windowMs: number): Readable {
  const minBytes = (MIN_TRANSFER_BYTES_PER_SECOND * windowMs) / 1000;
  let received = 0;
  let heldBack = false;
  const readerFull = () => guard.readableLength >= guard.readableHighWaterMark;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      callback(null, chunk);
      heldBack ||= readerFull();
    },
  });
  const timer = setInterval(() => {
    if (!heldBack && !readerFull() && received < minBytes) guard.destroy(new TransferTooSlowError(received, windowMs));
    received = 0;
    heldBack = false;
  }, windowMs);
  // The body's own end, error or abandonment ends the watch; the timer alone keeps nothing running.
  timer.unref();
  guard.once("close", () => clearInterval(timer));
  // Errors reach the reader through `guard`; destroying `guard` closes the body and its connection.
  pipeline(body, guard, () => undefined);
  return guard;
}
