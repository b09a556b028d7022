import type { ApiClient } from "../../api/types.js";
import type { Task } from "../../spec/task.js";
import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { parseCount } from "../parse-flags.js";
import { readIds } from "../read-ids.js";
import { printTable } from "../table.js";
import { TASK_COLUMNS, taskJson, taskRow } from "../task-view.js";
import { examples, requestTimeoutOption, timeoutOption } from "./shared/help.js";
import { count } from "../../format-count.js";

export interface StatusOptions {
  limit?: number;
}

/** `bulkcheck status [ids...]`. Tests pass their own `run` to see what the flags parse into. */
export function statusCommand(invoke: Invoke, run = statusRun) {
  return new Command("status")
    .description("show tasks (default: every task of this service and profile in the local store, newest first)")
    .argument("[ids...]", "task ids")
    .option("--limit <n>", "without ids, show at most the n most recent tasks", parseCount)
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText("after", examples(["bulkcheck status", "bulkcheck status --limit 5", "bulkcheck status 3f2a... --json | jq .status"]))
    .action((ids, options, cmd) => invoke(cmd, (ctx) => run(ctx, ids, options)));
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
export async function statusRun(ctx: Context, ids: string[], options: StatusOptions): Promise<void> {
  const fromJournal = ids.length === 0;
  const taskIds = fromJournal
    ? (await (await ctx.store()).recentTasks(await ctx.scope(), options.limit ?? Number.MAX_SAFE_INTEGER)).map((task) => task.taskId!)
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
  const { ApiError } = await import("../../api/errors.js");
  const { ApiCode } = await import("../../spec/codes.js");
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
