import type { CommandUnknownOpts, Help } from "../commander.js";
import type { Runtime } from "../context.js";
import { processIO } from "../io.js";
import { buildProgram } from "../program.js";

/**
 * What the command reference and the man page say about one command, read from
 * the command tree through commander's public Help API: the same text as
 * `bulkcheck <command> --help`, taken apart so each output can lay it out.
 */
export interface CommandDoc {
  /** The command's full name, such as "bulkcheck config set". */
  path: string;
  /** Nesting below the root: 0 for the root, 1 for `submit`, 2 for `config set`. */
  depth: number;
  usage: string;
  description: string;
  arguments: Term[];
  /** Its own options, without -h, --help (every command has it). */
  options: Term[];
  /** The root's flags it honours, as their terms ("-q, --quiet"). */
  globalOptions: string[];
  subcommands: Term[];
  /** The text its help prints after the generated part, in blocks. */
  after: HelpBlock[];
}

export interface Term {
  term: string;
  description: string;
}

/**
 * A block of after-help text: "Examples:" and its commands, a block with a
 * title line ("Exit codes:") and its preformatted lines, or a paragraph.
 */
export type HelpBlock =
  | { kind: "examples"; commands: string[] }
  | { kind: "titled"; title: string; lines: string[]; text: string }
  | { kind: "paragraph"; text: string };

/** Help laid out for an 80-column terminal, whatever the terminal running the generator is. */
const HELP_WIDTH = 80;

/** Every command of the tree, the root first, each followed by its subcommands (help's order). */
export function commandDocs(version: string): CommandDoc[] {
  const runsNothing = () => Promise.reject(new Error("the reference runs no command"));
  const program = buildProgram(referenceRuntime(), runsNothing, version, { main: runsNothing });
  return documented(program, 0);
}

function documented(command: CommandUnknownOpts, depth: number): CommandDoc[] {
  const help = command.createHelp();
  help.prepareContext({ helpWidth: HELP_WIDTH, outputHasColors: false });
  const subcommands = ownCommands(command, help);
  const doc: CommandDoc = {
    path: commandPath(command),
    depth,
    usage: help.commandUsage(command),
    description: help.commandDescription(command),
    arguments: help.visibleArguments(command).map((argument) => ({
      term: help.argumentTerm(argument),
      description: help.argumentDescription(argument),
    })),
    options: help
      .visibleOptions(command)
      .filter((option) => option.long !== "--help")
      .map((option) => ({ term: help.optionTerm(option), description: help.optionDescription(option) })),
    globalOptions: help.visibleGlobalOptions(command).map((option) => help.optionTerm(option)),
    subcommands: subcommands.map((sub) => ({ term: commandPath(sub), description: help.subcommandDescription(sub) })),
    after: helpBlocks(textAfterHelp(command)),
  };
  return [doc, ...subcommands.flatMap((sub) => documented(sub, depth + 1))];
}

/** The subcommands help lists, without the help command commander adds to a command with subcommands. */
function ownCommands(command: CommandUnknownOpts, help: Help): CommandUnknownOpts[] {
  return help.visibleCommands(command).filter((sub) => command.commands.includes(sub));
}

function commandPath(command: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let at: CommandUnknownOpts | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}

/**
 * What `addHelpText("after", …)` adds to the command's help: its help as
 * `--help` prints it, less the generated part (helpInformation).
 */
function textAfterHelp(command: CommandUnknownOpts): string {
  let printed = "";
  command.configureOutput({
    writeOut: (text) => (printed += text),
    getOutHelpWidth: () => HELP_WIDTH,
    getOutHasColors: () => false,
  });
  command.outputHelp();
  const generated = command.helpInformation();
  const start = printed.indexOf(generated);
  if (start === -1) throw new Error(`${commandPath(command)}: its help does not hold its generated help`);
  return printed.slice(start + generated.length);
}

/** After-help text, split at blank lines into blocks. */
function helpBlocks(text: string): HelpBlock[] {
  return text
    .split(/\n\s*\n/)
    .map((block) => block.replace(/^\n+|\s+$/g, ""))
    .filter((block) => block !== "")
    .map((block): HelpBlock => {
      const [first = "", ...rest] = block.split("\n");
      if (first === "Examples:") return { kind: "examples", commands: rest.map((line) => line.replace(/^\s*\$ /, "")) };
      if (/^\S.*:$/.test(first) && rest.length > 0) return { kind: "titled", title: first.slice(0, -1), lines: rest, text: block };
      return { kind: "paragraph", text: block.split("\n").join(" ") };
    });
}

/** Help's descriptions start in lower case, as commander's own do; the reference starts each with a capital. */
export function sentence(description: string): string {
  return description.charAt(0).toUpperCase() + description.slice(1);
}

/** The runtime the tree is built with: the process's streams, which nothing writes to (help goes to textAfterHelp's buffer). */
function referenceRuntime(): Runtime {
  return {
    io: processIO(),
    env: {},
    now: () => 0,
    sleep: () => Promise.resolve(),
    random: () => 0,
    signal: new AbortController().signal,
    cwd: "/",
  };
}
