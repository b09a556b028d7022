import { SERVICE_TYPE_ALIASES, SERVICE_TYPES } from "../spec/products.js";
import type { CommandUnknownOpts } from "./commander.js";
import { HELP_TOPICS } from "./help-topics.js";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** Commands whose arguments are task ids: their completion offers the ids in the local journal. */
const ID_COMMANDS = ["wait", "status", "download", "retry-failed", "report"];
/** Commands whose argument is a file. */
const FILE_COMMANDS = ["submit", "validate"];
/** The values of flags whose values are a fixed list; commander's `choices` add the rest. */
const FLAG_VALUES: Readonly<Record<string, readonly string[]>> = { "--type": [...SERVICE_TYPES, ...Object.keys(SERVICE_TYPE_ALIASES)] };

interface FlagSpec {
  long?: string;
  short?: string;
  takesValue: boolean;
  values: readonly string[];
  description: string;
}

interface CommandSpec {
  name: string;
  flags: FlagSpec[];
  subcommands: string[];
}

/** The program's commands and flags as the scripts need them, read from commander so they never drift. */
function describeProgram(root: CommandUnknownOpts) {
  const flagsOf = (command: CommandUnknownOpts): FlagSpec[] =>
    command.options
      .filter((option) => !option.hidden)
      .map((option) => ({
        ...(option.long ? { long: option.long } : {}),
        ...(option.short ? { short: option.short } : {}),
        takesValue: option.required || option.optional,
        values: option.argChoices ?? (option.long ? (FLAG_VALUES[option.long] ?? []) : []),
        description: option.description,
      }));
  const commands: CommandSpec[] = root.commands.map((command) => ({
    name: command.name(),
    flags: [...flagsOf(command), ...command.commands.flatMap(flagsOf)],
    subcommands:
      command.name() === "help"
        ? [...root.commands.map((c) => c.name()), ...Object.keys(HELP_TOPICS)]
        : command.commands.map((c) => c.name()),
  }));
  // --version is the root's alone: offered before a command, never after one.
  const globals = flagsOf(root).filter((flag) => flag.long !== "--version");
  return { globals, rootFlags: flagsOf(root), commands };
}

const words = (list: Iterable<string>) => [...list].join(" ");
const flagWords = (flags: readonly FlagSpec[]) => words(flags.flatMap((flag) => [flag.long, flag.short].filter((f): f is string => !!f)));
const valueFlags = (flags: readonly FlagSpec[]) => [
  ...new Set(flags.filter((flag) => flag.takesValue).flatMap((flag) => [flag.long, flag.short].filter((f): f is string => !!f))),
];

/** The completion script for `shell`: commands, flags, flag values, and task ids from `bulkcheck completion --task-ids`. */
export function completionScript(shell: Shell, root: CommandUnknownOpts): string {
  const program = describeProgram(root);
  if (shell === "fish") return fishScript(program);
  return shell === "bash" ? bashScript(program) : zshScript(program);
}

type Program = ReturnType<typeof describeProgram>;

/** `case "$prev"` arms offering each listed flag's values; used by bash and zsh alike. */
function valueCases(program: Program, offer: (values: string) => string): string {
  const byValues = new Map<string, Set<string>>();
  for (const flag of [...program.globals, ...program.commands.flatMap((command) => command.flags)]) {
    if (flag.values.length === 0 || !flag.long) continue;
    const key = words(flag.values);
    byValues.set(key, (byValues.get(key) ?? new Set()).add(flag.long));
  }
  return [...byValues].map(([values, flags]) => `    ${[...flags].join("|")}) ${offer(values)}; return ;;`).join("\n");
}

function commandCases(program: Program, body: (command: CommandSpec) => string): string {
  return program.commands.map((command) => `    ${command.name}) ${body(command)} ;;`).join("\n");
}

function bashScript(program: Program): string {
  const globalsTakingValues = valueFlags(program.globals).join("|");
  return `# bash completion for bulkcheck. Install: bulkcheck completion bash > ~/.local/share/bash-completion/completions/bulkcheck
_bulkcheck() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      ${globalsTakingValues}) ((i++)) ;;
      -*) ;;
      *) cmd="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$prev" in
${valueCases(program, (values) => `COMPREPLY=($(compgen -W "${values}" -- "$cur"))`)}
  esac
  if [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W "${words(program.commands.map((c) => c.name))} ${flagWords(program.rootFlags)}" -- "$cur"))
    return
  fi
  local flags
  case "$cmd" in
${commandCases(program, (command) => `flags="${flagWords(command.flags)}"`)}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags ${flagWords(program.globals)}" -- "$cur"))
    return
  fi
  case "$prev" in ${valueFlags([...program.commands.flatMap((c) => c.flags), ...program.globals]).join("|")}) return ;; esac
  case "$cmd" in
    ${ID_COMMANDS.join("|")}) COMPREPLY=($(compgen -W "$(bulkcheck completion --task-ids 2>/dev/null)" -- "$cur")) ;;
${program.commands
  .filter((command) => command.subcommands.length > 0)
  .map((command) => `    ${command.name}) COMPREPLY=($(compgen -W "${words(command.subcommands)}" -- "$cur")) ;;`)
  .join("\n")}
    completion) COMPREPLY=($(compgen -W "${words(SHELLS)}" -- "$cur")) ;;
  esac
}
complete -o default -F _bulkcheck bulkcheck
`;
}

function zshScript(program: Program): string {
  const globalsTakingValues = valueFlags(program.globals).join("|");
  return `#compdef bulkcheck
# zsh completion for bulkcheck. Install: bulkcheck completion zsh > "\${fpath[1]}/_bulkcheck" (then restart zsh),
# or add to ~/.zshrc: source <(bulkcheck completion zsh)
_bulkcheck() {
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]} cmd="" i
  for ((i = 2; i < CURRENT; i++)); do
    case \${words[i]} in
      ${globalsTakingValues}) ((i++)) ;;
      -*) ;;
      *) cmd=\${words[i]}; break ;;
    esac
  done
  case $prev in
${valueCases(program, (values) => `compadd -- ${values}`)}
  esac
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then compadd -- ${flagWords(program.rootFlags)}; else compadd -- ${words(program.commands.map((c) => c.name))}; fi
    return
  fi
  local -a flags
  case $cmd in
${commandCases(program, (command) => `flags=(${flagWords(command.flags)})`)}
  esac
  if [[ $cur == -* ]]; then compadd -- $flags ${flagWords(program.globals)}; return; fi
  case $prev in ${valueFlags([...program.commands.flatMap((c) => c.flags), ...program.globals]).join("|")}) _files; return ;; esac
  case $cmd in
    ${ID_COMMANDS.join("|")}) compadd -- \${(f)"$(bulkcheck completion --task-ids 2>/dev/null)"} ;;
    ${FILE_COMMANDS.join("|")}) _files ;;
${program.commands
  .filter((command) => command.subcommands.length > 0)
  .map((command) => `    ${command.name}) compadd -- ${words(command.subcommands)} ;;`)
  .join("\n")}
    completion) compadd -- ${words(SHELLS)} ;;
  esac
}
compdef _bulkcheck bulkcheck
# Autoloaded from fpath, this file is the body of _bulkcheck: run it; sourced, only define it.
if [[ "$funcstack[1]" == "_bulkcheck" ]]; then _bulkcheck "$@"; fi
`;
}

function fishScript(program: Program): string {
  const quote = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  const flagLine = (condition: string, flag: FlagSpec) =>
    [
      `complete -c bulkcheck -n ${quote(condition)}`,
      flag.long ? `-l ${flag.long.slice(2)}` : "",
      flag.short ? `-s ${flag.short.slice(1)}` : "",
      flag.takesValue ? "-r" : "",
      flag.values.length > 0 ? `-xa ${quote(words(flag.values))}` : "",
      `-d ${quote(flag.description)}`,
    ]
      .filter(Boolean)
      .join(" ");
  const lines = [
    "# fish completion for bulkcheck. Install: bulkcheck completion fish > ~/.config/fish/completions/bulkcheck.fish",
    "complete -c bulkcheck -f",
    ...program.commands.map((command) => `complete -c bulkcheck -n __fish_use_subcommand -a ${command.name}`),
    ...program.globals.map((flag) => flagLine("true", flag)),
    ...program.commands.flatMap((command) => command.flags.map((flag) => flagLine(`__fish_seen_subcommand_from ${command.name}`, flag))),
    `complete -c bulkcheck -n ${quote(`__fish_seen_subcommand_from ${ID_COMMANDS.join(" ")}`)} -a '(bulkcheck completion --task-ids 2>/dev/null)'`,
    `complete -c bulkcheck -n ${quote(`__fish_seen_subcommand_from ${FILE_COMMANDS.join(" ")}`)} -F`,
    ...program.commands
      .filter((command) => command.subcommands.length > 0)
      .map(
        (command) =>
          `complete -c bulkcheck -n ${quote(`__fish_seen_subcommand_from ${command.name}`)} -a ${quote(words(command.subcommands))}`,
      ),
    `complete -c bulkcheck -n '__fish_seen_subcommand_from completion' -a ${quote(words(SHELLS))}`,
  ];
  return `${lines.join("\n")}\n`;
}
