import { UsageError } from "../errors.js";

/**
 * A command line as the words of its argv, read the way a shell reads words and nothing
 * more: white space separates words; '…' keeps everything inside as it is; "…" keeps
 * everything but \" and \\; outside quotes, \ keeps the next character. No variables,
 * globs, pipes or redirections: what needs a shell says so (`sh -c '…'`), so a value
 * never turns into a command by accident.
 */
export function commandWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  const add = (text: string) => (word = (word ?? "") + text);
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'") {
      const end = text.indexOf("'", at + 1);
      if (end === -1) throw unclosed(text, "'");
      add(text.slice(at + 1, end));
      at = end;
    } else if (char === '"') {
      add("");
      for (at++; ; at++) {
        if (at >= text.length) throw unclosed(text, '"');
        const inner = text[at]!;
        if (inner === '"') break;
        if (inner === "\\" && (text[at + 1] === '"' || text[at + 1] === "\\")) add(text[++at]!);
        else add(inner);
      }
    } else if (char === "\\") {
      if (at + 1 >= text.length) throw new UsageError(`The command "${text}" ends with a lone \\.`);
      add(text[++at]!);
    } else add(char);
  }
  if (word !== undefined) words.push(word);
  if (words.length === 0) throw new UsageError("The command to run is empty.");
  return words;
}

function unclosed(text: string, quote: string): UsageError {
  return new UsageError(`The command "${text}" opens a ${quote} it never closes.`, {
    hint: `Close the quote; for shell syntax (pipes, variables, &&) run a shell: sh -c '…'`,
  });
}
