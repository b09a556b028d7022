import { exitCodesMarkdown } from "../exit-codes.js";
import { ENVIRONMENT, HELP_TOPICS, type HelpTopic } from "../help-topics.js";
import { sentence, type CommandDoc, type HelpBlock, type Term } from "./command-docs.js";
import { exitCodesAfterTable, topicsHolding, topicTitle, TOPICS } from "./topics.js";

/** docs/reference.md: a contents list, a section per command, then one per help topic. */
export function referenceMarkdown(commands: readonly CommandDoc[]): string {
  const [root] = commands;
  const sections = [
    `# ${root!.path} command reference`,
    "<!-- Generated from the command tree by `npm run docs` (scripts/gen-docs.mjs): edit the commands, not this file. -->",
    `Every command with its arguments and options, as \`${root!.path} COMMAND --help\` prints them, and the help topics ` +
      `(\`${root!.path} help TOPIC\`). The man page has the same text: \`man ${root!.path}\` once installed, \`man ./${root!.path}.1\` in a clone.`,
    "## Contents",
    [
      ...commands.map((command) => `${"  ".repeat(Math.max(command.depth - 1, 0))}- ${link(command.path)}`),
      ...TOPICS.map((topic) => `- ${link(topicTitle(topic))}`),
    ].join("\n"),
    ...commands.map(commandSection),
    ...TOPICS.map((topic) =>
      [`## ${topicTitle(topic)}`, `\`${root!.path} help ${topic}\`: ${HELP_TOPICS[topic].summary}.`, topicBody(topic)].join("\n\n"),
    ),
  ];
  return `${sections.join("\n\n")}\n`;
}

function commandSection(command: CommandDoc): string {
  const parts = [`${command.depth < 2 ? "##" : "###"} ${command.path}`, text(sentence(command.description)), fenced(command.usage)];
  if (command.arguments.length > 0) parts.push(table(["Argument", "Description"], command.arguments));
  if (command.options.length > 0) parts.push(table(["Option", "Description"], command.options));
  if (command.globalOptions.length > 0) {
    parts.push(`Global options: ${command.globalOptions.map(code).join(", ")} (see ${link("bulkcheck")}).`);
  }
  if (command.subcommands.length > 0) {
    parts.push(
      table(
        ["Command", "Description"],
        command.subcommands.map(({ term, description }) => ({ term: link(term), description })),
        (term) => term,
      ),
    );
  }
  parts.push(...command.after.map(afterBlock));
  return parts.join("\n\n");
}

function afterBlock(block: HelpBlock): string {
  const held = topicsHolding(block);
  if (block.kind === "titled" && held.length > 0) return `${block.title}: see ${held.map((topic) => link(topicTitle(topic))).join(", ")}.`;
  switch (block.kind) {
    case "examples":
      return `Examples:\n\n${fenced(block.commands.join("\n"), "sh")}`;
    case "titled":
      return `${text(block.title)}:\n\n${fenced(block.lines.join("\n"))}`;
    case "paragraph":
      return text(block.text);
  }
}

function topicBody(topic: HelpTopic): string {
  switch (topic) {
    case "exit-codes":
      return `${exitCodesMarkdown()}\n\n${fenced(exitCodesAfterTable())}`;
    case "environment":
      return table(
        ["Variable", "Meaning"],
        ENVIRONMENT.map(({ names, lines }) => ({ term: names.replace(/\b[A-Z][A-Z_]+\b/g, "`$&`"), description: lines.join(" ") })),
        (term) => term,
      );
    default:
      return fenced(HELP_TOPICS[topic].text().trimEnd());
  }
}

function table(header: [string, string], rows: readonly Term[], renderTerm: (term: string) => string = code): string {
  return [
    `| ${header.join(" | ")} |`,
    "|---|---|",
    ...rows.map(({ term, description }) => `| ${renderTerm(term)} | ${cell(text(description))} |`),
  ].join("\n");
}

/** A link to a heading of this page, by GitHub's rule for heading anchors. */
function link(heading: string): string {
  const anchor = heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");
  return `[${heading}](#${anchor})`;
}

/**
 * Help text as Markdown text: characters Markdown would read as markup are
 * escaped (GitHub reads no emphasis into the underscores inside a word, as in
 * NO_COLOR, so those stay as they are).
 */
function text(plain: string): string {
  return plain.replace(/[\\`*[\]<>|]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, "\\$&");
}

/** A code span, inside a table cell. */
function code(plain: string): string {
  return cell(`\`${plain}\``);
}

/** GitHub ends a table cell at any |, even in a code span, unless it is escaped. */
function cell(markdown: string): string {
  return markdown.replace(/(?<!\\)\|/g, "\\|");
}

function fenced(lines: string, language = ""): string {
  return `\`\`\`${language}\n${lines}\n\`\`\``;
}
