/**
 * Worker thread entry: classifies blocks with classifyBlock, the same function
 * the in-thread path calls. Loaded from dist/ at runtime (block-pool.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { classifyBlock, transferables, type BlockSettings } from "./block-classifier.js";
import type { BlockRequest } from "./block-pool.js";

const settings = workerData as BlockSettings;
const port = parentPort!;
port.on("message", ({ id, text, firstLine }: BlockRequest) => {
  const block = classifyBlock({ text, firstLine }, settings);
  port.postMessage({ id, ...block }, transferables(block));
});
