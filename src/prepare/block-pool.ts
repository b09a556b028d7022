import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { classifyPiece, type BlockSettings, type ClassifiedBlock } from "./block-classifier.js";
import type { ListPiece } from "./row-source.js";

/** Classifies pieces of a list, in this thread or in worker threads; the answers are the same either way. */
export interface BlockPool {
  classify(piece: ListPiece): Promise<ClassifiedBlock>;
  /** Worker threads started so far (0 while everything runs in-thread). */
  readonly threads: number;
  close(): Promise<void>;
}

/** A request to a worker: a piece of the list and its tag. */
export type BlockRequest = ListPiece & { id: number };

type Pending = { resolve: (block: ClassifiedBlock) => void; reject: (error: unknown) => void };
type PoolWorker = { worker: Worker; pending: Map<number, Pending> };

/**
 * The compiled worker script next to this module, or undefined when running from
 * TypeScript sources (vitest), where only the in-thread path exists.
 */
export function workerScript(): URL | undefined {
  const url = new URL("./classify-worker.js", import.meta.url);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

/**
 * Hands each piece to the least busy of `threads` workers, or classifies it in
 * this thread when `threads` is 0. Callers await results in the order they need
 * them; the pool does not reorder.
 */
export function createBlockPool(settings: BlockSettings, threads: number): BlockPool {
  const script = threads > 0 ? workerScript() : undefined;
  if (threads > 0 && script === undefined) {
    throw new Error("prepare: worker threads need the compiled classify-worker.js next to block-pool.js");
  }
  const workers: PoolWorker[] = [];
  let nextId = 0;
  return {
    classify(piece) {
      if (script === undefined) return Promise.resolve(classifyPiece(piece, settings));
      if (workers.length === 0) for (let i = 0; i < threads; i++) workers.push(startWorker(script, settings));
      const target = workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const id = nextId++;
      return new Promise<ClassifiedBlock>((resolve, reject) => {
        target.pending.set(id, { resolve, reject });
        const request: BlockRequest = { id, ...piece };
        target.worker.postMessage(request);
      });
    },
    get threads() {
      return workers.length;
    },
    async close() {
      await Promise.all(workers.map(({ worker }) => worker.terminate()));
    },
  };
}

function startWorker(script: URL, settings: BlockSettings): PoolWorker {
  const worker = new Worker(script, { workerData: settings });
  const pending = new Map<number, Pending>();
  const failAll = (error: unknown): void => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  worker.on("message", (message: ClassifiedBlock & { id: number }) => {
    const p = pending.get(message.id);
    pending.delete(message.id);
    p?.resolve(message);
  });
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`prepare: a classify worker exited with code ${code}`)));
  return { worker, pending };
}
