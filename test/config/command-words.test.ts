import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { commandWords } from "../../src/config/command-words.js";

describe("commandWords splits a command line as a shell splits words, and does nothing else", () => {
  it.each([
    ["notify-send done", ["notify-send", "done"]],
    ["  spaced \t out\n", ["spaced", "out"]],
    ["echo 'a  b' c", ["echo", "a  b", "c"]],
    [`echo "a 'b' c"`, ["echo", "a 'b' c"]],
    [`echo "say \\"hi\\" \\\\ \\n"`, ["echo", 'say "hi" \\ \\n']],
    ["echo a\\ b", ["echo", "a b"]],
    ["echo ''", ["echo", ""]],
    [
      `sh -c "test $BULKCHECK_EXIT = 0 || mail -s \\"bulkcheck: $BULKCHECK_STATUS\\" ops@example.com"`,
      ["sh", "-c", 'test $BULKCHECK_EXIT = 0 || mail -s "bulkcheck: $BULKCHECK_STATUS" ops@example.com'],
    ],
    ["echo $HOME *.csv | wc", ["echo", "$HOME", "*.csv", "|", "wc"]],
    ["a'b'\"c\"d", ["abcd"]],
  ])("%s", (text, words) => {
    expect(commandWords(text)).toEqual(words);
  });

  it.each([["echo 'open"], ['echo "open'], ["echo \\"], [""], ["   "]])("refuses %j as a usage error", (text) => {
    expect(() => commandWords(text)).toThrow(UsageError);
  });
});
