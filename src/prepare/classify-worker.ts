/**
 * Worker thread entry: classifies batches of cells with classifyCell, the same
 * function the in-thread path calls. Loaded from dist/ at runtime (classify-pool.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { classifyCell, type ClassifyOptions } from "./classify.js";
import { encodeClassifications, splitCells } from "./classification-codec.js";

export interface ClassifyRequest {
  id: number;
  cells: string;
}

const options = workerData as ClassifyOptions;
const port = parentPort!;
port.on("message", (request: ClassifyRequest) => {
  const encoded = encodeClassifications(splitCells(request.cells).map((cell) => classifyCell(cell, options)));
  port.postMessage({ id: request.id, ...encoded }, [encoded.codes.buffer as ArrayBuffer]);
});
