import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { classifyCell, type Classification, type ClassifyOptions } from "./classify.js";
import { decodeClassifications, joinCells, type EncodedClassifications } from "./classification-codec.js";
import type { ClassifyRequest } from "./classify-worker.js";

/** Classifies batches of cells, in this thread or in worker threads; answers are the same either way. */
export interface CellPool {
  classify(cells: readonly string[]): Promise<Classification[]>;
  /** How many worker threads have been started (0 while everything runs in-thread). */
  readonly threads: number;
  close(): Promise<void>;
}

export interface PoolPlan {
  /** Worker threads to use; 0 classifies in this thread. */
  workers: number;
  /** Classify this many cells in-thread before starting workers (a short list never pays their start-up). */
  startAfterCells: number;
}

type Pending = { resolve: (list: Classification[]) => void; reject: (error: unknown) => void };

/**
 * The compiled worker script next to this module, or undefined when running from
 * TypeScript sources (vitest), where only the in-thread path exists.
 */
export function workerScript(): URL | undefined {
  const url = new URL("./classify-worker.js", import.meta.url);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

/**
 * A pool that classifies in-thread, then (past `startAfterCells`) spreads batches
 * over worker threads, least busy first. Callers await results in the order they
 * need them; the pool does not reorder.
 */
export function createCellPool(options: ClassifyOptions, plan: PoolPlan): CellPool {
  const script = plan.workers > 0 ? workerScript() : undefined;
  if (plan.workers > 0 && script === undefined) {
    throw new Error("prepare: worker threads need the compiled classify-worker.js next to classify-pool.js");
  }
  const workers: Array<{ worker: Worker; pending: Map<number, Pending> }> = [];
  let classified = 0;
  let nextId = 0;

  const start = (): void => {
    for (let i = 0; i < plan.workers; i++) {
      const worker = new Worker(script!, { workerData: options });
      const pending = new Map<number, Pending>();
      const failAll = (error: unknown): void => {
        for (const p of pending.values()) p.reject(error);
        pending.clear();
      };
      worker.on("message", (message: EncodedClassifications & { id: number }) => {
        const p = pending.get(message.id);
        pending.delete(message.id);
        p?.resolve(decodeClassifications(message));
      });
      worker.on("error", failAll);
      worker.on("exit", (code) => failAll(new Error(`prepare: a classify worker exited with code ${code}`)));
      workers.push({ worker, pending });
    }
  };

  return {
    classify(cells) {
      if (cells.length === 0) return Promise.resolve([]);
      if (script === undefined || classified < plan.startAfterCells) {
        classified += cells.length;
        return Promise.resolve(cells.map((cell) => classifyCell(cell, options)));
      }
      if (workers.length === 0) start();
      const target = workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const id = nextId++;
      return new Promise<Classification[]>((resolve, reject) => {
        target.pending.set(id, { resolve, reject });
        const request: ClassifyRequest = { id, cells: joinCells(cells) };
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
