import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import { BulkcheckError, StoreUnavailableError, type ErrorKind } from "../errors.js";
import { FileSystemError } from "../file-system-errors.js";
import { readResultParts } from "../results/read-results.js";
import type { TaskCounts } from "../results/result-rules.js";
import type { ServiceType } from "../spec/products.js";
import { openStore, type ConnectionEnv } from "../store/open.js";
import { ResultCollection } from "../store/result-collection.js";

/** The store a recording writes to, as configured (a team's URL and the environment carry the password: never shown). */
export interface RecordingStore {
  location: string;
  env: ConnectionEnv;
}

/** One task's result to record from a file: what a worker is started with (see recording.ts). */
export interface RecordingJob {
  store: RecordingStore;
  /** The task's reference in the store. */
  taskRef: number;
  /** The result file: staged whole, or still being written by the download that reads it (see GrowingFile). */
  path: string;
  product: ServiceType;
  /** The task as last checked: its counts bound its result (result-rules.ts). */
  task: TaskCounts;
  label: string;
}

/** Bytes read from the file at a time, as a file stream reads them (the reader buffers a few pieces ahead). */
const READ_BYTES = 64 * 1024;

/**
 * A file another thread is still writing: read as far as it is said to have grown, waiting
 * for more until it is complete. A download writes the result's bytes here as it reads them
 * itself, so the recording parses them meanwhile rather than after the output is written.
 */
export class GrowingFile {
  #bytes = 0;
  #complete = false;
  #abandoned = false;
  #wake: (() => void) | undefined;

  constructor(readonly path: string) {}

  /** The first `bytes` bytes are written. */
  grew(bytes: number): void {
    this.#bytes = Math.max(this.#bytes, bytes);
    this.#wake?.();
  }

  /** The file is whole, `bytes` long. */
  completed(bytes: number): void {
    this.#complete = true;
    this.grew(bytes);
  }

  /** The file will not be whole (the download failed or starts again): its reader stops. */
  abandoned(): void {
    this.#abandoned = true;
    this.#wake?.();
  }

  async *chunks(): AsyncGenerator<Buffer> {
    const handle = await open(this.path, "r");
    try {
      for (let position = 0; ;) {
        if (this.#abandoned) throw new Error(`the recording of ${this.path} was abandoned`);
        while (position < this.#bytes) {
          const { bytesRead, buffer } = await handle.read(
            Buffer.alloc(Math.min(READ_BYTES, this.#bytes - position)),
            0,
            undefined,
            position,
          );
          if (bytesRead === 0) throw new Error(`${this.path} is shorter than the ${this.#bytes} bytes written to it`);
          position += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
        if (this.#complete) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      await handle.close();
    }
  }
}

/**
 * Records a task's result from its file: every row parsed once (to the same rules as any
 * reading of a result), held in memory in a compact form and sorted by number (see
 * ResultCollection), then, once `turn` gives the moment the result counts from (one recording
 * writes at a time), inserted in key order and the task marked recorded in the same last
 * transaction (Ledger.record, on a connection of the recording's own). A result without any
 * row (not even a header) is not marked. Returns the rows recorded. `signal` stops connecting
 * to a team's store (the embedded one opens at once).
 */
export async function recordResultFile(
  job: RecordingJob,
  file: GrowingFile,
  turn: () => Promise<string>,
  signal: AbortSignal,
): Promise<number> {
  let rows: ResultCollection | undefined;
  const source = { label: job.label, task: job.task, open: () => Promise.resolve(Readable.from(file.chunks())) };
  for await (const part of readResultParts([source], { serviceType: job.product })) {
    if (!rows) {
      rows = new ResultCollection(part.rows[0]!.slice(1));
      continue;
    }
    for (const row of part.rows) rows.add(row);
  }
  const at = await turn();
  if (!rows) return 0;
  // Opened as every command opens it: a store made newer or damaged meanwhile is refused the same way.
  const store = await openStore(job.store.location, job.store.env, { signal });
  try {
    await store.ledger.record(job.taskRef, rows, at);
  } finally {
    await store.close();
  }
  return rows.size;
}

/** A failure as it crosses from a worker: what the exit-code table and the user need of it. */
export interface FailureMessage {
  kind: ErrorKind;
  name: string;
  message: string;
  hint?: string;
  /** A refusal of the file system, rebuilt as one (callers add what they know to its hint, e.g. that tasks go on). */
  fileSystem?: { path: string | undefined; systemCode: string; writing: boolean };
  /** The store gone away, rebuilt as StoreUnavailableError: no failure of the service, so no transfer is started again for it. */
  storeUnavailable?: true;
}

export function failureMessage(error: unknown): FailureMessage {
  if (error instanceof BulkcheckError) {
    return {
      kind: error.kind,
      name: error.name,
      message: error.message,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
      ...(error instanceof FileSystemError
        ? { fileSystem: { path: error.path, systemCode: error.systemCode, writing: error.writing } }
        : {}),
      ...(error instanceof StoreUnavailableError ? { storeUnavailable: true as const } : {}),
    };
  }
  return {
    kind: "unexpected",
    name: (error as Error | undefined)?.name ?? "Error",
    message: String((error as Error | undefined)?.message ?? error),
  };
}

/** The failure again, in this thread: same kind (so the same exit code), message and hint. */
export function failureFrom(message: FailureMessage): Error {
  if (message.kind === "unexpected") return Object.assign(new Error(message.message), { name: message.name });
  if (message.fileSystem) {
    const { path, systemCode, writing } = message.fileSystem;
    return new FileSystemError(path, systemCode, writing, message.hint === undefined ? {} : { hint: message.hint });
  }
  const details = message.hint === undefined ? {} : { hint: message.hint };
  if (message.storeUnavailable) return new StoreUnavailableError(message.message, details);
  const error = new BulkcheckError(message.kind, message.message, details);
  return Object.assign(error, { name: message.name });
}
