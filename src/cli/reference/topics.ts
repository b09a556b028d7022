import { exitCodesHelp } from "../exit-codes.js";
import { HELP_TOPICS, helpTopicsList, type HelpTopic } from "../help-topics.js";
import { sentence, type HelpBlock } from "./command-docs.js";

/** The help topics, in help's order: each is a section after the commands. */
export const TOPICS = Object.keys(HELP_TOPICS) as HelpTopic[];

/** A topic's section title: "exit-codes" is "Exit codes". */
export function topicTitle(topic: HelpTopic): string {
  return sentence(topic.replaceAll("-", " "));
}

/** What `bulkcheck help exit-codes` says after the table itself. */
export function exitCodesAfterTable(): string {
  return HELP_TOPICS["exit-codes"].text().slice(exitCodesHelp().length).trim();
}

/**
 * The topics whose sections hold a block of the root's help in full (the exit
 * codes, the list of topics), for the root's section to point to them instead;
 * none for any other block.
 */
export function topicsHolding(block: HelpBlock): HelpTopic[] {
  if (block.kind !== "titled") return [];
  if (block.text === exitCodesHelp()) return ["exit-codes"];
  if (block.text === helpTopicsList()) return TOPICS;
  return [];
}
