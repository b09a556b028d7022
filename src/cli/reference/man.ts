import { EXIT_CODE_TABLE, wrapWords } from "../exit-codes.js";
import { ENVIRONMENT, HELP_TOPICS, type HelpTopic } from "../help-topics.js";
import { sentence, type CommandDoc, type HelpBlock, type Term } from "./command-docs.js";
import { exitCodesAfterTable, topicsHolding, TOPICS } from "./topics.js";

/** The man page section each help topic becomes. */
const TOPIC_SECTIONS: Readonly<Record<HelpTopic, string>> = {
  "exit-codes": "EXIT STATUS",
  environment: "ENVIRONMENT",
  formats: "FILES",
  query: "JSON QUERIES",
};

export interface ManPage {
  version: string;
  homepage: string;
}

/**
 * bulkcheck.1: the whole command tree in one page (man(7) macros), with the
 * topics as EXIT STATUS, ENVIRONMENT, FILES and JSON QUERIES. No date in .TH, so the page
 * is the same whenever it is generated.
 */
export function manPage(commands: readonly CommandDoc[], { version, homepage }: ManPage): string {
  const [root, ...rest] = commands;
  const name = root!.path;
  const topLevel = rest.filter((command) => command.depth === 1);
  const lines = [
    // Flags and paths stay whole: no hyphenation (groff's man macros read HY at each paragraph), ragged right.
    ".nr HY 0",
    `.TH ${name.toUpperCase()} 1 "" "${name} ${version}" "User Commands"`,
    ".ad l",
    ".SH NAME",
    `${name} \\- ${roff(root!.description.replace(/\.$/, "").toLowerCase())}`,
    ".SH SYNOPSIS",
    ...[root!, ...topLevel].flatMap((command, index) => [...(index > 0 ? [".br"] : []), usage(command.usage)]),
    ".SH DESCRIPTION",
    filled(root!.description),
    ...root!.after.flatMap(afterBlock),
    ".PP",
    "Each command is described under COMMANDS below,",
    `as \\fB${name} help\\fR \\fIcommand\\fR prints it.`,
    ".SH OPTIONS",
    ...terms(root!.options, termLine),
    ".SH COMMANDS",
    ...rest.flatMap(commandSection),
    ...topicSections(name),
    ".SH EXAMPLES",
    "The first example of each command; COMMANDS has them all.",
    ...topLevel.flatMap((command) => {
      const [first] = command.after.flatMap((block) => (block.kind === "examples" ? block.commands : []));
      return first === undefined ? [] : [".PP", filled(sentence(command.description)), ...example([first])];
    }),
    '.SH "SEE ALSO"',
    `${TOPICS.map((topic) => `\\fB${name} help ${roff(topic)}\\fR`).join(", ")}; the command reference (docs/reference.md) and the guides at`,
    roff(homepage),
  ];
  return `${lines.join("\n")}\n`;
}

function commandSection(command: CommandDoc): string[] {
  const lines = [`.SS ${roff(command.path)}`, usage(command.usage), ".PP", filled(sentence(command.description))];
  if (command.arguments.length > 0) lines.push(".PP", "Arguments:", ".RS 4", ...terms(command.arguments, argumentLine), ".RE");
  if (command.options.length > 0) lines.push(".PP", "Options:", ".RS 4", ...terms(command.options, termLine), ".RE");
  if (command.globalOptions.length > 0) {
    lines.push(".PP", `Global options: ${command.globalOptions.map((term) => termLine(term)).join(",\n")}.`);
  }
  if (command.subcommands.length > 0) {
    lines.push(".PP", "Commands:", ".RS 4", ...terms(command.subcommands, (term) => `\\fB${roff(term)}\\fR`), ".RE");
  }
  lines.push(...command.after.flatMap(afterBlock));
  return lines;
}

function topicSections(name: string): string[] {
  return [
    '.SH "EXIT STATUS"',
    ...EXIT_CODE_TABLE.flatMap(({ exitCode, jsonCode, meaning }) => [
      ".TP",
      `\\fB${exitCode}\\fR${jsonCode === undefined ? "" : ` (\\fI${roff(jsonCode)}\\fR)`}`,
      filled(sentence(meaning.replaceAll("`", ""))),
    ]),
    ...preformatted(exitCodesAfterTable()),
    ".SH ENVIRONMENT",
    ...ENVIRONMENT.flatMap(({ names, lines }) => [".TP", `\\fB${roff(names)}\\fR`, ...lines.map(roff)]),
    ".SH FILES",
    `${roff(sentence(HELP_TOPICS.formats.summary))} (\\fB${name} help formats\\fR):`,
    ...preformatted(HELP_TOPICS.formats.text()),
    '.SH "JSON QUERIES"',
    `${roff(sentence(HELP_TOPICS.query.summary))} (\\fB${name} help query\\fR):`,
    ...preformatted(HELP_TOPICS.query.text()),
  ];
}

function afterBlock(block: HelpBlock): string[] {
  const held = topicsHolding(block);
  if (block.kind === "titled" && held.length > 0) {
    return [".PP", `${roff(block.title)}: see ${held.map((topic) => TOPIC_SECTIONS[topic]).join(", ")} below.`];
  }
  switch (block.kind) {
    case "examples":
      return [".PP", "Examples:", ...example(block.commands)];
    case "titled":
      return [".PP", `${roff(block.title)}:`, ...preformatted(block.lines.join("\n"))];
    case "paragraph":
      return [".PP", filled(block.text)];
  }
}

function terms(list: readonly Term[], renderTerm: (term: string) => string): string[] {
  return list.flatMap(({ term, description }) => [".TP", renderTerm(term), filled(description)]);
}

/** "-o, --output <file>": the flags in bold, what they take in italics. */
function termLine(term: string): string {
  return term
    .split(/(?<=,) | (?=[<[])/)
    .map((part) => (/^[<[]/.test(part) ? `\\fI${roff(part)}\\fR` : `\\fB${roff(part)}\\fR`))
    .join(" ");
}

/** An argument as help names it ("ids...", "[shell]"), in italics. */
function argumentLine(term: string): string {
  return `\\fI${roff(term)}\\fR`;
}

/** A usage line: the command in bold, what follows it as help prints it. */
function usage(line: string): string {
  const end = line.search(/ [<[]/);
  const command = end === -1 ? line : line.slice(0, end);
  return `\\fB${roff(command)}\\fR${roff(line.slice(command.length))}`;
}

/** Commands to type, one a line, indented; a long one continued on the next lines (with \\) to fit 80 columns. */
function example(commands: readonly string[]): string[] {
  return [".RS 4", ".EX", ...commands.flatMap((command) => shellLines(command).map(roff)), ".EE", ".RE"];
}

/** Room for a command in an example: 80 columns less the page's and the example's indent, and " \\". */
const EXAMPLE_WIDTH = 80 - 7 - 4 - 2;

/** A command split at the spaces outside quotes into lines that fit, each but the last ending in a backslash. */
export function shellLines(command: string): string[] {
  if (command.length <= EXAMPLE_WIDTH) return [command];
  const words = command.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) ?? [];
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    if (line !== "" && line.length + 1 + word.length > EXAMPLE_WIDTH) {
      lines.push(`${line} \\`);
      line = `    ${word}`;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line];
}

/** Text laid out for an 80-column terminal, kept as it is, at the page's left margin so it still fits in 80. */
function preformatted(text: string): string[] {
  return [".PP", ".in 0", ".EX", ...text.trimEnd().split("\n").map(roff), ".EE", ".in"];
}

/** Prose as roff text in lines of at most about 80 bytes (roff fills them to the page's width). */
function filled(text: string): string {
  return wrapWords(text, 72).map(roff).join("\n");
}

/**
 * Help text as roff text: backslashes and hyphens escaped (a hyphen is a
 * minus sign, so a flag copied from the page works), a line that would start
 * a request protected, and anything past ASCII as a named code point.
 */
function roff(text: string): string {
  return text
    .replaceAll("\\", "\\e")
    .replaceAll("-", "\\-")
    .replace(/[^\x20-\x7e\n]/gu, (char) => `\\[u${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}]`)
    .replace(/^[.']/gm, "\\&$&");
}
