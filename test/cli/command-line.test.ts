import { describe, expect, it } from "vitest";
import { commandLine } from "../../src/cli/command-line.js";

describe("commandLine", () => {
  it.each([
    [["submit", "list.csv", "--type", "carrier_batch", "-o", "-"], "bulkcheck submit list.csv --type carrier_batch -o -"],
    [["submit", "my list.csv", "--column", "it's"], "bulkcheck submit 'my list.csv' --column 'it'\\''s'"],
    [["submit", "$HOME/*.csv", "--max-cost", "$5"], "bulkcheck submit '$HOME/*.csv' --max-cost '$5'"],
  ])("quotes %j so that a shell runs it again as it was", (argv, line) => {
    expect(commandLine(argv)).toBe(line);
  });

  it.each(["/dev/fd/63", "/proc/self/fd/11"])(
    "shows a process substitution's pipe %s as <(…), since it is gone once the command ends",
    (pipe) => {
      expect(commandLine(["submit", pipe, "--type", "carrier_batch"])).toBe("bulkcheck submit <(…) --type carrier_batch");
    },
  );
});
