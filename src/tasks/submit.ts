import type { Task } from "../spec/task.js";

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
  /** The store's reference of the part's task row, written before any upload attempt. */
  ref: number;
  /** The task this part already has, as just checked: it is followed, not uploaded again. */
  knownTask?: Task;
  /** When the part's key was written, before its first upload attempt: no task of this part can be older. */
  keyWrittenAt?: string;
}

export interface UploadResult {
  upload: PlannedUpload;
  task: Task;
  /** The service returned a task this key had already created (nothing was reserved again). */
  replayed: boolean;
}
