import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EXIT_CODE_TABLE, EXIT_CODES, exitCodesHelp, exitCodesMarkdown, kindForExitCode } from "../../src/cli/exit-codes.js";
import { runCli } from "../helpers/cli.js";

const RELIABILITY = readFileSync(fileURLToPath(new URL("../../docs/reliability.md", import.meta.url)), "utf8");
const REFERENCE = readFileSync(fileURLToPath(new URL("../../docs/reference.md", import.meta.url)), "utf8");

/** The exit codes the rows of the Markdown table whose header starts with `firstHeaderCell` name in their first cell ("3, 4, 5" names three). */
function codesOfTable(firstHeaderCell: string): Set<number> {
  const start = RELIABILITY.indexOf(`| ${firstHeaderCell} |`);
  expect(start, `docs/reliability.md has no table starting "| ${firstHeaderCell} |"`).toBeGreaterThan(-1);
  const rows = RELIABILITY.slice(start).split("\n\n")[0]!.split("\n").slice(2);
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
  it("reads every failure's kind back from its exit code: 143 is a stop as 130 is, and a code of no failure is unexpected", () => {
    for (const row of EXIT_CODE_TABLE.filter((row) => row.jsonCode !== undefined && row.jsonCode !== "terminated")) {
      expect(kindForExitCode(row.exitCode)).toBe(row.jsonCode);
    }
    expect(kindForExitCode(EXIT_CODES.terminated)).toBe("interrupted");
    for (const code of [EXIT_CODES.ok, EXIT_CODES.changed, 99]) expect(kindForExitCode(code)).toBe("unexpected");
  });

  it("is in the command reference exactly as the code renders it", () => {
    // docs/reference.md is generated (npm run docs); test/docs/reference.test.ts checks the whole file.
    const section = REFERENCE.split("\n## Exit codes\n")[1]?.split("\n## ")[0];
    expect(section, "docs/reference.md has no Exit codes section").toBeDefined();
    expect(section).toContain(`\n${exitCodesMarkdown()}\n`);
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

  it("says 7 covers the store being unavailable as well as the service", () => {
    const meaning = EXIT_CODE_TABLE.find((row) => row.exitCode === 7)?.meaning;
    expect(meaning).toMatch(/^service unavailable/);
    expect(meaning).toMatch(/store unavailable \(a team's PostgreSQL/);
  });

  it("and the cron table in docs/reliability.md name the same exit codes", () => {
    expect(codesOfTable("Exit")).toEqual(new Set(EXIT_CODE_TABLE.map((row) => row.exitCode)));
  });
});
