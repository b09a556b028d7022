import { UsageError } from "../errors.js";
import type { Context } from "./context.js";
import { readAllStdin } from "./prompt.js";

const TASK_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Task ids from the arguments, or from stdin when the only argument is `-`
 * (so `bulkcheck submit ... | bulkcheck wait -` works). Ids are checked for shape
 * here so a typo fails fast with exit 2 instead of costing a request.
 */
export async function readIds(ctx: Context, args: readonly string[]): Promise<string[]> {
  let ids = [...args];
  if (args.length === 1 && args[0] === "-") ids = (await readAllStdin(ctx.io)).split(/\s+/).filter(Boolean);
  if (ids.length === 0) throw new UsageError("No task ids given.", { hint: "Pass ids as arguments, or - to read them from stdin." });
  for (const id of ids) {
    if (!TASK_ID.test(id))
      throw new UsageError(`"${id}" is not a task id.`, {
        hint: "Task ids look like 3f2a91c0e4b14d0f9a7e2b6c8d1f0a53 (see bulkcheck status).",
      });
  }
  return [...new Set(ids)];
}
