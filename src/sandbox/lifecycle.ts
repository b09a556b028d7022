import type { Prepared } from "./preparation.js";

/**
 * Task progress as a pure function of the clock: nothing runs on timers, so a
 * test that moves an injected clock sees exactly the state it expects.
 *
 *   createdAt ── preparing ──▶ prepEnd ── processing ──▶ finishedAt: success | failed
 *
 * Preparation takes 500 ms plus 1 ms per 20 lines (20,000 lines/s), so on the real
 * clock the background classification is normally done by prepEnd. If it is not,
 * a request observing the task after prepEnd waits for it (`TaskStore.observe`),
 * so the answer still depends only on the clock. Processing takes
 * kept ÷ numbersPerSecond; a task that kept no number finishes at prepEnd.
 */
export interface LifecycleFacts {
  createdAtMs: number;
  submittedLines: number;
  fails: boolean;
}

export type Phase =
  | { status: "processing"; preparing: true }
  | { status: "processing"; preparing: false; prepared: Prepared }
  | { status: "success" | "failed"; prepared: Prepared; finishedAtMs: number };

const PREPARATION_BASE_MS = 500;
const PREPARATION_LINES_PER_SECOND = 20_000;

export function preparationEndMs(task: LifecycleFacts): number {
  return task.createdAtMs + PREPARATION_BASE_MS + Math.ceil((task.submittedLines * 1000) / PREPARATION_LINES_PER_SECOND);
}

/** The phase at `nowMs`; `prepared` is undefined while classification is still running (shown as preparing). */
export function phaseAt(task: LifecycleFacts, prepared: Prepared | undefined, nowMs: number, numbersPerSecond: number): Phase {
  const prepEnd = preparationEndMs(task);
  if (nowMs < prepEnd || !prepared) return { status: "processing", preparing: true };
  const finishedAtMs = prepEnd + Math.ceil((prepared.keptCount * 1000) / numbersPerSecond);
  if (nowMs < finishedAtMs) return { status: "processing", preparing: false, prepared };
  return { status: task.fails ? "failed" : "success", prepared, finishedAtMs };
}

/** Successful checks that are charged: every kept number except those without a result. */
export function successCount(phase: Extract<Phase, { finishedAtMs: number }>): number {
  return phase.status === "success" ? phase.prepared.keptCount - phase.prepared.noResult : 0;
}
