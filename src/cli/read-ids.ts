import { TASK_ID } from "../api/resources.js";
import { UsageError } from "../errors.js";
import type { Context } from "./context.js";
import { readAllStdin } from "./prompt.js";

/**
 * Task ids wherever they come from: arguments, `-` for stdin (`bulkcheck submit
 * ... | bulkcheck wait -`), or one argument holding several ids separated by
 * white space or new lines (`bulkcheck wait "$ID"` after `ID=$(bulkcheck submit
 * ...)` of a list split into several tasks). Ids are checked for shape here so a
 * typo fails fast with exit 2 instead of costing a request; repeats count once.
 */
export async function readIds(ctx: Pick<Context, "io">, args: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const arg of args) {
    const text = arg === "-" ? await readAllStdin(ctx.io) : arg;
    ids.push(...text.split(/\s+/).filter(Boolean));
  }
  if (ids.length === 0) throw new UsageError("No task ids given.", { hint: "Pass ids as arguments, or - to read them from stdin." });
  for (const id of ids) {
    if (!TASK_ID.test(id))
      throw new UsageError(`"${id}" is not a task id.`, {
        hint: "Task ids look like 3f2a91c0e4b14d0f9a7e2b6c8d1f0a53 (see bulkcheck status).",
      });
  }
  return [...new Set(ids)];
}
