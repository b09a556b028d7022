import type { ApiClient } from "../../api/types.js";
import type { Task } from "../../spec/task.js";
import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
import { printTable } from "../table.js";
import { TASK_COLUMNS, taskJson, taskRow } from "../views/task-view.js";
import { count } from "../../format-count.js";
import { ApiError } from "../../api/errors.js";
import { ApiCode } from "../../spec/codes.js";
import { noteSeen } from "./shared/seen-tasks.js";

export interface StatusOptions {
  limit?: number;
}

/** A journalled task the service does not know (a restarted sandbox, another account). */
type Unknown = { id: string; status: "not_found" };

/** Checks at once, when listing the journal: enough to be quick, few enough to be polite. */
const CHECKS_IN_FLIGHT = 4;

/**
 * One check per task. Without ids: the journal's tasks of this service and
 * profile, newest first, where a task the service does not know is a row marked
 * `not found` rather than a failure of the whole listing.
 */
export async function statusAction(ctx: Context, ids: string[], options: StatusOptions): Promise<void> {
  const fromJournal = ids.length === 0;
  const taskIds = fromJournal
    ? (await (await ctx.store()).tasks.recent(await ctx.scope(), options.limit ?? Number.MAX_SAFE_INTEGER)).map((task) => task.taskId!)
    : await readIds(ctx, ids);
  if (taskIds.length === 0) {
    ctx.printer.note(
      `No tasks of profile "${ctx.profileName}" in the local store yet. Submit one with: bulkcheck submit <file> --type <service_type> --country <CC>`,
    );
    return;
  }
  const client = await ctx.client();
  const check = fromJournal ? (id: string) => checkOrUnknown(client, id) : (id: string) => client.checkTask(id);
  const tasks = await inOrder(taskIds, check);
  await noteSeen(
    ctx,
    tasks.filter((task): task is Task => !isUnknown(task)),
  );
  if (ctx.globals.json) {
    for (const task of tasks) ctx.printer.json(isUnknown(task) ? task : taskJson(task));
  } else {
    printTable(ctx.printer, TASK_COLUMNS, tasks.map(row));
  }
  const unknown = tasks.filter(isUnknown).length;
  if (unknown > 0) {
    ctx.printer.note(
      `${count(unknown)} of these tasks ${unknown === 1 ? "is" : "are"} not known to ${await ctx.baseUrl()} (a restarted sandbox forgets its tasks).`,
    );
  }
}

/** The task, or "not found" when the service answers the check with 40000 (HTTP 404 on the sandbox). */
async function checkOrUnknown(client: Pick<ApiClient, "checkTask">, id: string): Promise<Task | Unknown> {
  try {
    return await client.checkTask(id);
  } catch (error) {
    if (error instanceof ApiError && error.apiCode === ApiCode.UNSUPPORTED_OR_CONFLICT) return { id, status: "not_found" };
    throw error;
  }
}

function isUnknown(task: Task | Unknown): task is Unknown {
  return task.status === "not_found";
}

function row(task: Task | Unknown): string[] {
  return isUnknown(task) ? [task.id, "", "", "not found", "", "", "", ""] : taskRow(task);
}

/** `work` for every id, a few at a time, the results in the order of `ids`; the first failure stops the rest. */
async function inOrder<T>(ids: readonly string[], work: (id: string) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(ids.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < ids.length; index = next++) results[index] = await work(ids[index]!);
  };
  await Promise.all(Array.from({ length: Math.min(CHECKS_IN_FLIGHT, ids.length) }, worker));
  return results;
}
