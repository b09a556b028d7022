import { ApiCode } from "../../spec/codes.js";
import type { SandboxCore } from "../core.js";
import type { Exchange } from "../exchange.js";
import { conflictingField, readIdempotencyKey, type IdempotentEntry } from "../idempotency.js";
import { randomHex } from "../random.js";
import { taskView } from "../task-view.js";
import { readUpload, type Submission } from "../upload.js";

/**
 * `POST /api/v1/bulk-tasks`. Order of decisions:
 * 1. Idempotency-Key header (40000 when empty or over 128 characters).
 * 2. A request slot (42901 + Retry-After when all are in use); released when the
 *    response ends, the client goes away, or the upload falls silent for
 *    `uploadIdleSeconds` (its connection is then closed).
 * 3. The multipart body (`readUpload`: early 40000/42200 without reading the rest).
 * 4. Settling every task finished by now, so refunds are available.
 * 5. One synchronous step, atomic with respect to every other request: replay
 *    or conflict for a known key (40000 for another service_type or country,
 *    42200 "Idempotency-Key reused with a different request" for another file), the minimum size (42200), the unfinished-task
 *    quota (42900), the balance check and reservation (40200), task creation,
 *    and claiming the key. Nothing in between awaits, so concurrent submits can
 *    neither overspend nor create two tasks for one key.
 * A replay answers after the whole body is read, with `Idempotent-Replayed: true`.
 */
export async function handleSubmit(ex: Exchange, core: SandboxCore): Promise<void> {
  const keyReading = readIdempotencyKey(ex.req.headers["idempotency-key"]);
  if (!keyReading.ok) return ex.envelope(ApiCode.UNSUPPORTED_OR_CONFLICT, keyReading.msg);
  const release = core.slots.tryAcquire();
  if (!release) {
    return ex.envelope(
      ApiCode.SLOTS_OCCUPIED,
      "all request slots are occupied; resubmit after an in-flight request finishes",
      {},
      {
        "retry-after": String(core.options.retryAfterSeconds),
      },
    );
  }
  ex.onClose(release);
  const upload = await readWithIdleLimit(ex, core.options.uploadIdleSeconds, () => readUpload(ex.req, core.options));
  if (upload.kind === "aborted") return;
  if (upload.kind === "rejected") return ex.envelope(upload.code, upload.msg);
  await core.tasks.refreshAll(core.options.now());
  commit(ex, core, upload.submission, keyReading.key);
}

/**
 * Reads the upload, closing the connection when it falls silent for
 * `idleSeconds`: a stalled client must not hold one of the few request slots
 * until the HTTP server's own request timeout, minutes later.
 */
async function readWithIdleLimit<T>(ex: Exchange, idleSeconds: number, read: () => Promise<T>): Promise<T> {
  const { socket } = ex.req;
  const stalled = (): void => {
    ex.mark("upload-stalled");
    socket.destroy();
  };
  socket.setTimeout(idleSeconds * 1000);
  socket.once("timeout", stalled);
  try {
    return await read();
  } finally {
    socket.setTimeout(0);
    socket.off("timeout", stalled);
  }
}

function replay(ex: Exchange, core: SandboxCore, entry: IdempotentEntry, submission: Submission, nowMs: number): void {
  const field = conflictingField(entry, submission);
  // A key is a promise about one request: replaying it with another list would hand that list someone else's task.
  if (field === "file") return ex.envelope(ApiCode.UNPROCESSABLE, "Idempotency-Key reused with a different request");
  if (field) {
    return ex.envelope(
      ApiCode.UNSUPPORTED_OR_CONFLICT,
      `conflicting request fields: this Idempotency-Key was used with a different ${field}`,
    );
  }
  const task = core.tasks.get(entry.taskId);
  if (!task) throw new Error(`idempotency key points at missing task ${entry.taskId}`);
  ex.mark("replayed");
  ex.envelope(ApiCode.OK, "success", taskView(task, core.tasks.observeNow(task, nowMs), core.viewAt(nowMs)), {
    "idempotent-replayed": "true",
  });
}

function commit(ex: Exchange, core: SandboxCore, submission: Submission, key: string | undefined): void {
  const nowMs = core.options.now();
  const prior = key === undefined ? undefined : core.idempotency.find(key);
  if (prior) return replay(ex, core, prior, submission, nowMs);
  const { minTaskSize, maxUnfinished } = core.options;
  const lines = submission.lines.length;
  if (lines < minTaskSize) {
    return ex.envelope(ApiCode.UNPROCESSABLE, `the file has ${lines} numbers; a task needs at least ${minTaskSize}`);
  }
  if (core.tasks.unfinishedCount() >= maxUnfinished) {
    return ex.envelope(ApiCode.QUOTA_EXHAUSTED, `too many unfinished tasks (${maxUnfinished}); wait for some to finish`);
  }
  const id = randomHex(16);
  const priceMicros = core.prices[submission.product];
  const reservedMicros = lines * priceMicros;
  if (!core.ledger.reserve(id, reservedMicros, nowMs)) {
    return ex.envelope(
      ApiCode.INSUFFICIENT_BALANCE,
      `insufficient balance: the task needs ${reservedMicros} micros, the balance is ${core.ledger.balance} micros`,
    );
  }
  const task = core.tasks.create({ id, ...submission, priceMicros, reservedMicros, idempotencyKey: key, createdAtMs: nowMs });
  if (key !== undefined) {
    core.idempotency.remember(key, { taskId: id, product: submission.product, country: submission.country, sha256: submission.sha256 });
  }
  ex.envelope(ApiCode.OK, "success", taskView(task, core.tasks.observeNow(task, nowMs), core.viewAt(nowMs)));
}
