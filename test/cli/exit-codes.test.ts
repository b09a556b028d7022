import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EXIT_CODE_TABLE, exitCodesHelp, exitCodesMarkdown } from "../../src/cli/exit-codes.js";
import { runCli } from "../helpers/cli.js";

const README = readFileSync(fileURLToPath(new URL("../../docs/reliability.md", import.meta.url)), "utf8");

/** The README's copy of the table: the lines between its markers. */
function readmeExitCodes(): string {
  const match = /<!-- exit-codes:[^\n]*-->\n([\s\S]*?)\n<!-- \/exit-codes -->/.exec(README);
  expect(match, "README.md lost its exit-codes markers").not.toBeNull();
  return match![1]!;
}

/** The exit codes the rows of the Markdown table whose header starts with `firstHeaderCell` name in their first cell ("3, 4, 5" names three). */
function codesOfTable(firstHeaderCell: string): Set<number> {
  const start = README.indexOf(`| ${firstHeaderCell} |`);
  expect(start, `README.md has no table starting "| ${firstHeaderCell} |"`).toBeGreaterThan(-1);
  const rows = README.slice(start).split("\n\n")[0]!.split("\n").slice(2);
  return new Set(
    rows.flatMap((row) =>
      row
        .split("|")[1]!
        .split(",")
        .map((code) => Number(code.trim())),
    ),
  );
}

describe("the exit-code table", () => {
  it("is in README.md exactly as the code renders it", () => {
    // On failure, paste the expected text between the README's exit-codes markers.
    expect(readmeExitCodes()).toBe(exitCodesMarkdown());
  });

  it("is what `bulkcheck help exit-codes` prints, with every JSON error code", async () => {
    const out = await runCli(["help", "exit-codes"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(exitCodesHelp());
    const codes = out.stdout.slice(out.stdout.indexOf("code is one of ")).replace(/\s+/g, " ");
    expect(codes).toContain(
      "code is one of unexpected, usage, input, auth, balance, task_failed, unavailable, pending, count_mismatch, busy, interrupted, terminated.",
    );
  });

  it("puts a full disk under 3 and --strict under its own code 9, with no code used twice", () => {
    const meaning = (code: number) => EXIT_CODE_TABLE.find((row) => row.exitCode === code)?.meaning;
    expect(meaning(2)).not.toMatch(/disk full/);
    expect(meaning(3)).toMatch(/disk full/);
    expect(meaning(9)).toMatch(/^`--strict`/);
    expect(meaning(1)).not.toMatch(/strict/);
    const codes = EXIT_CODE_TABLE.map((row) => row.exitCode);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("and the Cron section's table name the same exit codes", () => {
    expect(codesOfTable("Exit")).toEqual(new Set(EXIT_CODE_TABLE.map((row) => row.exitCode)));
  });
});
