import { commandDocs } from "./command-docs.js";
import { manPage } from "./man.js";
import { referenceMarkdown } from "./markdown.js";

/** The files `npm run docs` writes, by their path in the repository, with what they hold. */
export function generateReference(pkg: { version: string; homepage: string }): Record<string, string> {
  const commands = commandDocs(pkg.version);
  return {
    "docs/reference.md": referenceMarkdown(commands),
    "bulkcheck.1": manPage(commands, pkg),
  };
}
