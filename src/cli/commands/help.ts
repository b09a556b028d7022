import { UsageError } from "../../errors.js";
import { Command, type CommandUnknownOpts } from "../commander.js";
import type { IO } from "../io.js";
import { HELP_TOPICS, isHelpTopic } from "../help-topics.js";

/**
 * `bulkcheck help [command|topic]`, in place of commander's own help command so
 * that topics (exit-codes, environment, formats) sit beside the commands' help:
 * `help submit` and `help config set` print that command's help as before.
 */
export function helpCommand(io: Pick<IO, "stdout">) {
  return new Command("help")
    .description(`help for a command, or a topic: ${Object.keys(HELP_TOPICS).join(", ")}`)
    .argument("[name...]", "a command (such as submit, or config set), or a topic")
    .action((names, _options, cmd) => {
      const root = cmd.parent ?? cmd;
      const [first] = names;
      if (first === undefined) return root.outputHelp();
      if (isHelpTopic(first) && names.length === 1) {
        io.stdout.write(HELP_TOPICS[first].text());
        return;
      }
      const target = findCommand(root, names);
      if (!target) {
        throw new UsageError(`There is no command or help topic "${names.join(" ")}".`, {
          hint: `Commands: ${root.commands.map((command) => command.name()).join(", ")}. Topics: ${Object.keys(HELP_TOPICS).join(", ")}.`,
        });
      }
      target.outputHelp();
    });
}

function findCommand(root: CommandUnknownOpts, path: readonly string[]): CommandUnknownOpts | undefined {
  let command: CommandUnknownOpts | undefined = root;
  for (const name of path) command = command?.commands.find((child) => child.name() === name || child.aliases().includes(name));
  return command === root ? undefined : command;
}
