import { setTimeout as delay } from "node:timers/promises";

/** The default sleep: a timer that rejects (AbortError) as soon as `signal` aborts. */
export async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  await delay(ms, undefined, signal ? { signal } : undefined);
}
