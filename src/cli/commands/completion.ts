import { UsageError } from "../../errors.js";
import { Command, Option, type CommandUnknownOpts } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { examples } from "./shared/help.js";

export interface CompletionOptions {
  taskIds?: boolean;
}

/** How many journalled task ids completion offers, newest first. */
const TASK_IDS_OFFERED = 50;

/** `bulkcheck completion bash|zsh|fish`: prints a completion script. */
export function completionCommand(invoke: Invoke) {
  return new Command("completion")
    .description("print a shell completion script (bash, zsh or fish)")
    .argument("[shell]", "bash, zsh or fish")
    .addOption(new Option("--task-ids", "print the journal's recent task ids (what the scripts offer)").hideHelp())
    .addHelpText(
      "after",
      examples([
        "bulkcheck completion bash > ~/.local/share/bash-completion/completions/bulkcheck",
        'bulkcheck completion zsh > "${fpath[1]}/_bulkcheck"',
        "bulkcheck completion fish > ~/.config/fish/completions/bulkcheck.fish",
      ]),
    )
    .action((shell, options: CompletionOptions, cmd) =>
      invoke(cmd, (ctx) => (options.taskIds ? printTaskIds(ctx) : printScript(ctx, shell, cmd.parent ?? cmd))),
    );
}

/** The script for `shell`, built from the program's own commands and flags (loaded only here). */
async function printScript(ctx: Context, shell: string | undefined, root: CommandUnknownOpts): Promise<void> {
  const { completionScript, SHELLS } = await import("../completion.js");
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
  const ids = (await (await ctx.store()).recentTasks(await ctx.scope(), TASK_IDS_OFFERED)).map((task) => task.taskId!);
  for (const id of ids) ctx.printer.data(id);
}
