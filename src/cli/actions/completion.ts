import { UsageError } from "../../errors.js";
import type { CommandUnknownOpts } from "../commander.js";
import { completionScript, SHELLS } from "../completion.js";
import type { Context } from "../context.js";

export interface CompletionOptions {
  taskIds?: boolean;
}

/** How many journalled task ids completion offers, newest first. */
const TASK_IDS_OFFERED = 50;

/** The completion script for `shell`, or with --task-ids the ids the scripts offer. */
export async function completionAction(
  ctx: Context,
  shell: string | undefined,
  options: CompletionOptions,
  root: CommandUnknownOpts,
): Promise<void> {
  if (options.taskIds) await printTaskIds(ctx);
  else printScript(ctx, shell, root);
}

/** The script for `shell`, built from the program's own commands and flags. */
function printScript(ctx: Context, shell: string | undefined, root: CommandUnknownOpts): void {
  const known = SHELLS.find((name) => name === shell);
  if (!known) {
    throw new UsageError(
      shell === undefined ? "Which shell? bulkcheck completion bash, zsh or fish." : `No completion for the shell "${shell}".`,
      {
        hint: `Shells: ${SHELLS.join(", ")}. See bulkcheck completion --help for where to put the script.`,
      },
    );
  }
  ctx.io.stdout.write(completionScript(known, root));
}

/** The ids completion offers: this profile's recent tasks, newest first. */
async function printTaskIds(ctx: Context): Promise<void> {
  const ids = (await (await ctx.store()).tasks.recent(await ctx.scope(), TASK_IDS_OFFERED)).map((task) => task.taskId!);
  for (const id of ids) ctx.printer.data(id);
}
