/**
 * Worker thread entry: classifies pieces of a list with classifyPiece, the same
 * function the in-thread path calls. Loaded from dist/ at runtime (block-pool.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { classifyPiece, transferables, type BlockSettings } from "./block-classifier.js";
import type { BlockRequest } from "./block-pool.js";

const settings = workerData as BlockSettings;
const port = parentPort!;
port.on("message", ({ id, ...piece }: BlockRequest) => {
  const block = classifyPiece(piece, settings);
  port.postMessage({ id, ...block }, transferables(block));
});
