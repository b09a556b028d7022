import { setTimeout as delay } from "node:timers/promises";
import { operationSignal } from "../operation-signal.js";

/**
 * The sleep of every wait: a timer that rejects (AbortError) as soon as `signal` aborts,
 * listening through a signal of its own (see operationSignal), however many waits share `signal`.
 */
export async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return delay(ms);
  const operation = operationSignal(signal);
  try {
    await delay(ms, undefined, { signal: operation.signal });
  } finally {
    operation.release();
  }
}
