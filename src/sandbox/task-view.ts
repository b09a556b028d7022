import type { Task } from "../spec/task.js";
import { successCount, type Phase } from "./lifecycle.js";
import type { ResultLinks } from "./signing.js";
import type { TaskRecord } from "./tasks.js";

export interface ViewContext {
  links: ResultLinks;
  resultFormat: "csv" | "zip";
  resultDelaySeconds: number;
  nowMs: number;
}

/** File name of a task's result, as it appears in the result URL. */
export function resultFileName(taskId: string, format: "csv" | "zip"): string {
  return `${taskId}.${format}`;
}

/**
 * The fuller task variant, fields in the spec's order. While preparing, the
 * exclusion counts are 0 and total equals submitted_lines. A finished task
 * carries success_cnt and failure_cnt (a failed one: 0 and total). result_url is
 * signed afresh on every call, and withheld for `resultDelaySeconds` after success.
 */
export function taskView(task: TaskRecord, phase: Phase, view: ViewContext): Task {
  const prepared = "prepared" in phase ? phase.prepared : undefined;
  const total = prepared ? prepared.keptCount : task.submittedLines;
  const finished: Pick<Task, "success_cnt" | "failure_cnt" | "result_url"> = {};
  if ("finishedAtMs" in phase) {
    finished.success_cnt = successCount(phase);
    finished.failure_cnt = total - finished.success_cnt;
    if (phase.status === "success" && view.nowMs >= phase.finishedAtMs + view.resultDelaySeconds * 1000) {
      finished.result_url = view.links.urlFor(resultFileName(task.id, view.resultFormat), view.nowMs);
    }
  }
  return {
    id: task.id,
    product: task.product,
    status: phase.status,
    country: task.country,
    submitted_lines: task.submittedLines,
    total,
    invalid_cnt: prepared?.invalid ?? 0,
    no_code_cnt: prepared?.noCode ?? 0,
    other_country_cnt: prepared?.otherCountry ?? 0,
    duplicate_cnt: prepared?.duplicate ?? 0,
    preparing: phase.status === "processing" && phase.preparing,
    ...finished,
    created_at: new Date(task.createdAtMs).toISOString(),
  };
}
