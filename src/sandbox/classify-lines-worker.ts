/**
 * Worker thread entry: classifies one upload's lines as the service does (prepareAllLines),
 * off the sandbox's event loop. Loaded from dist/ at runtime (preparation.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { prepareAllLines, type PreparationInput } from "./preparation.js";

parentPort!.postMessage(prepareAllLines(workerData as PreparationInput));
