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

/** What an upload needs besides its part. */
export interface UploadContext {
  client: Pick<ApiClient, "submitTask">;
  journal: Journal;
  product: string;
  country: string | undefined;
  /** Journal context written before each first attempt. */
  entry: Pick<SubmitEntry, "profile" | "source" | "preparation" | "prepared" | "retry_of">;
  now: () => number;
}

/**
 * Uploads one part. Its key is journalled before the first attempt, and its task id
 * as soon as it is known, so a crash at any point can be resumed by re-running.
 */
export async function uploadOne(input: UploadContext, upload: PlannedUpload): Promise<UploadResult> {
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
  return { upload, task, replayed: wasReplay };
}
