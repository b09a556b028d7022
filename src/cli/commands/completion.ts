import { Command, Option } from "../commander.js";
import type { Invoke } from "../context.js";
import type { CompletionOptions } from "../actions/completion.js";
import { examples } from "./shared/help.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/completion.js");

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
      invoke(cmd, async (ctx) => (await actions()).completionAction(ctx, shell, options, cmd.parent ?? cmd)),
    );
}
