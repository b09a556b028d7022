import type { TableColumn } from "../../results/format-table.js";
import { count } from "../../format-count.js";
import type { Task } from "../../spec/task.js";

/** The columns of a task table; on a narrow terminal CREATED goes first, then COUNTRY, TOTAL and NO RESULT. */
export const TASK_COLUMNS: readonly TableColumn[] = [
  { header: "ID", whole: true },
  { header: "PRODUCT" },
  { header: "COUNTRY", dropOrder: 2 },
  { header: "STATUS" },
  { header: "TOTAL", dropOrder: 3, count: true },
  { header: "CHECKED", count: true },
  { header: "NO RESULT", dropOrder: 4, count: true },
  { header: "CREATED", dropOrder: 1 },
];

/** A task as one table row; counts the service has not reported yet stay empty. */
export function taskRow(task: Task): string[] {
  const digits = (value: number | undefined) => (value === undefined ? "" : String(value));
  return [
    task.id,
    task.product,
    task.country ?? "",
    task.preparing ? `${task.status} (preparing)` : task.status,
    digits(task.total),
    digits(task.success_cnt),
    digits(task.failure_cnt),
    task.created_at,
  ];
}

/** The task as --json prints it: the service's fields, minus the bearer result_url. */
export function taskJson(task: Task): Omit<Task, "result_url"> & { result_ready?: boolean } {
  const { result_url, ...rest } = task;
  return task.status === "success" ? { ...rest, result_ready: result_url !== undefined } : rest;
}

/** One line for humans: "3f2a91c0… success: 1,980 checked, 20 without result". */
export function describeTask(task: Task): string {
  const head = `task ${task.id} ${task.status}`;
  const counted = (value: number | undefined) => (value === undefined ? "?" : count(value));
  if (task.status === "success") {
    return `${head}: ${counted(task.success_cnt)} checked, ${counted(task.failure_cnt)} without result`;
  }
  if (task.status === "failed") return `${head} (fully refunded)`;
  return task.preparing ? `${head} (preparing ${counted(task.total)} lines)` : `${head} (${counted(task.total)} numbers)`;
}
