import type { ApiClient } from "../api/types.js";
import type { Journal, SubmitEntry } from "../journal/journal.js";
import type { Task } from "../spec/task.js";
import { deriveIdempotencyKey, userKeyForChunk } from "./idempotency.js";

/** One upload file produced by preparation. */
export interface Chunk {
  path: string;
  count: number;
  bytes: number;
  sha256: string;
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
  journal: Journal;
}

/** Gives every chunk its idempotency key and looks each key up in the journal. */
export async function planUploads(input: PlanInput): Promise<PlannedUpload[]> {
  const of = input.chunks.length;
  const planned: PlannedUpload[] = [];
  for (const [index, chunk] of input.chunks.entries()) {
    const idempotencyKey = input.userKey
      ? userKeyForChunk(input.userKey, index, of)
      : deriveIdempotencyKey(
          input.installSecret,
          { product: input.product, country: input.country, contentSha256: chunk.sha256 },
          input.nonce,
        );
    const known = await input.journal.findByKey(idempotencyKey);
    planned.push({ ...chunk, index, of, idempotencyKey, ...(known?.taskId ? { knownTaskId: known.taskId } : {}) });
  }
  return planned;
}

export interface UploadResult {
  upload: PlannedUpload;
  task: Task;
  /** The service returned a task this key had already created (nothing was reserved again). */
  replayed: boolean;
}

export interface UploadInput {
  uploads: readonly PlannedUpload[];
  client: Pick<ApiClient, "submitTask">;
  journal: Journal;
  product: string;
  country: string | undefined;
  concurrency: number;
  /** Journal context written before each first attempt. */
  entry: Pick<SubmitEntry, "profile" | "source" | "preparation" | "prepared" | "retry_of">;
  now: () => number;
  onUploaded?: (result: UploadResult) => void;
}

/**
 * Uploads the chunks, at most `concurrency` at a time (the service's request
 * slots). Each key is journalled before its first attempt, and each task id as
 * soon as it is known, so a crash at any point can be resumed by re-running.
 * After the first failure no new upload starts; those in flight finish, then
 * the failure is thrown (the tasks already created were reported through
 * `onUploaded`).
 */
export async function uploadAll(input: UploadInput): Promise<UploadResult[]> {
  const results: UploadResult[] = [];
  const queue = [...input.uploads];
  const failures: unknown[] = [];
  const worker = async () => {
    for (let upload = queue.shift(); upload && failures.length === 0; upload = queue.shift()) {
      try {
        results.push(await uploadOne(input, upload));
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, queue.length)) }, worker));
  if (failures.length > 0) throw failures[0];
  return results.sort((a, b) => a.upload.index - b.upload.index);
}

async function uploadOne(input: UploadInput, upload: PlannedUpload): Promise<UploadResult> {
  const at = () => new Date(input.now()).toISOString();
  await input.journal.append({
    type: "submit",
    at: at(),
    idempotency_key: upload.idempotencyKey,
    product: input.product,
    ...(input.country ? { country: input.country } : {}),
    ...input.entry,
    chunk: { index: upload.index, of: upload.of, count: upload.count, sha256: upload.sha256 },
  });
  const { task, replayed } = await input.client.submitTask({
    serviceType: input.product,
    ...(input.country ? { country: input.country } : {}),
    file: upload.path,
    fileName: upload.of === 1 ? "numbers.txt" : `numbers-${upload.index + 1}-of-${upload.of}.txt`,
    idempotencyKey: upload.idempotencyKey,
  });
  const wasReplay = replayed || upload.knownTaskId === task.id;
  await input.journal.append({ type: "task", at: at(), idempotency_key: upload.idempotencyKey, task_id: task.id, replayed: wasReplay });
  const result = { upload, task, replayed: wasReplay };
  input.onUploaded?.(result);
  return result;
}
