import { ApiError } from "../api/errors.js";
import type { ApiClient } from "../api/types.js";
import { InputRejectedError, ProtocolError } from "../errors.js";
import { recordWithKey, type Journal, type JournalRecord, type JournalScope, type SubmitEntry } from "../journal/journal.js";
import { ApiCode } from "../spec/codes.js";
import type { Task } from "../spec/task.js";
import { deriveIdempotencyKey, userKeyForChunk } from "./idempotency.js";

/** One upload file produced by preparation. */
export interface Chunk {
  path: string;
  count: number;
  bytes: number;
  sha256: string;
  /** Under `--country auto`: this part's own country, instead of the submission's. */
  country?: string;
}

export interface PlannedUpload extends Chunk {
  index: number;
  of: number;
  idempotencyKey: string;
  /** The task this exact upload already created, per the journal. */
  knownTaskId?: string;
}

export interface PlanInput {
  chunks: readonly Chunk[];
  product: string;
  country: string | undefined;
  installSecret: string;
  /** --idempotency-key, used as given (numbered per chunk). */
  userKey?: string;
  /** --resubmit: a fresh nonce, so the keys differ from every earlier run. */
  nonce?: string;
  journal: Pick<Journal, "records">;
  /** Where the uploads go: keys are looked up for this service and profile only. */
  scope: JournalScope;
  /** For retry-failed: the task whose numbers these are, which the derived keys include. */
  retryOf?: string;
}

/**
 * Gives every chunk its idempotency key and looks each key up in the journal.
 * A key the journal holds for other content is refused here, before anything is
 * sent: the service would answer with the earlier task, and the new list would
 * never be checked.
 */
export async function planUploads(input: PlanInput): Promise<PlannedUpload[]> {
  const of = input.chunks.length;
  const planned: PlannedUpload[] = [];
  const records = await input.journal.records();
  for (const [index, chunk] of input.chunks.entries()) {
    const idempotencyKey = input.userKey
      ? userKeyForChunk(input.userKey, index, of)
      : deriveIdempotencyKey(
          input.installSecret,
          {
            product: input.product,
            country: chunk.country ?? input.country,
            contentSha256: chunk.sha256,
            ...(input.retryOf === undefined ? {} : { retryOf: input.retryOf }),
          },
          input.nonce,
        );
    const known = recordWithKey(records, idempotencyKey, input.scope);
    if (known && known.submit.chunk.sha256 !== chunk.sha256) throw keyReused(idempotencyKey, known);
    planned.push({ ...chunk, index, of, idempotencyKey, ...(known?.taskId ? { knownTaskId: known.taskId } : {}) });
  }
  return planned;
}

function keyReused(key: string, earlier: JournalRecord): InputRejectedError {
  const { at, source } = earlier.submit;
  const task = earlier.taskId ? `task ${earlier.taskId}` : "no task id recorded";
  return new InputRejectedError(
    `The idempotency key "${key}" was used on ${at} for a different list (${source.path ?? "stdin"}, ${task}). ` +
      "The service would return that task instead of checking this list, so nothing was uploaded.",
    { hint: "Give each list its own --idempotency-key (for example with the date in it), or leave it out to derive one from the content." },
  );
}

export interface UploadResult {
  upload: PlannedUpload;
  task: Task;
  /** The service returned a task this key had already created (nothing was reserved again). */
  replayed: boolean;
}

/** What an upload needs besides its part. */
export interface UploadContext {
  client: Pick<ApiClient, "submitTask">;
  journal: Journal;
  product: string;
  country: string | undefined;
  /** Journal context written before each first attempt. */
  entry: Pick<SubmitEntry, "base_url" | "profile" | "source" | "preparation" | "prepared" | "retry_of">;
  now: () => number;
}

/**
 * Uploads one part. Its key is journalled before the first attempt, and its task id
 * as soon as it is known, so a crash at any point can be resumed by re-running.
 */
export async function uploadOne(input: UploadContext, upload: PlannedUpload): Promise<UploadResult> {
  const at = () => new Date(input.now()).toISOString();
  const country = upload.country ?? input.country;
  await input.journal.append({
    type: "submit",
    at: at(),
    idempotency_key: upload.idempotencyKey,
    product: input.product,
    ...(country ? { country } : {}),
    ...input.entry,
    chunk: { index: upload.index, of: upload.of, count: upload.count, sha256: upload.sha256 },
  });
  const { task, replayed } = await input.client
    .submitTask({
      serviceType: input.product,
      ...(country ? { country } : {}),
      file: upload.path,
      fileName: upload.of === 1 ? "numbers.txt" : `numbers-${upload.index + 1}-of-${upload.of}.txt`,
      idempotencyKey: upload.idempotencyKey,
    })
    .catch((error: unknown) => {
      throw explainKeyConflict(error, upload.idempotencyKey);
    });
  const wasReplay = replayed || upload.knownTaskId === task.id;
  const { base_url, profile, retry_of } = input.entry;
  if (retry_of === task.id) {
    throw new ProtocolError(`The service answered a retry of task ${task.id} with that same task; it was not recorded as its own retry.`, {
      hint: "Check that --base-url points at the bulk-checking service.",
    });
  }
  await input.journal.append({
    type: "task",
    at: at(),
    base_url,
    profile,
    idempotency_key: upload.idempotencyKey,
    task_id: task.id,
    replayed: wasReplay,
  });
  return { upload, task, replayed: wasReplay };
}

/**
 * The service holds the key for another file (one submitted elsewhere, so the
 * journal could not tell): it answers 42200 naming the Idempotency-Key. Still a
 * rejected input (exit 3), said in terms of the key rather than the file's form.
 */
function explainKeyConflict(error: unknown, key: string): unknown {
  if (!(error instanceof ApiError) || error.apiCode !== ApiCode.UNPROCESSABLE || !/idempotency/i.test(error.serviceMessage)) return error;
  return new InputRejectedError(
    `The service already holds the idempotency key "${key}" for a different file (42200: "${error.serviceMessage}"); nothing was uploaded.`,
    { hint: "Give each list its own --idempotency-key, or leave it out to derive one from the content.", cause: error },
  );
}
