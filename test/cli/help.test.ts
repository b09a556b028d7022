import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

/** Issue 14: help that answers. */
const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

function sourceText(dir: string): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((entry) =>
      entry.isDirectory()
        ? sourceText(join(dir, entry.name))
        : entry.name.endsWith(".ts")
          ? readFileSync(join(dir, entry.name), "utf8")
          : "",
    )
    .join("\n");
}

describe("bulkcheck help", () => {
  it("prints the exit-code table, 143 included, for `help exit-codes`", async () => {
    const out = await runCli(["help", "exit-codes"]);
    expect(out.code).toBe(0);
    for (const code of ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "130", "143"])
      expect(out.stdout).toMatch(new RegExp(`^\\s+${code}  \\S`, "m"));
    expect(out.stdout).toContain('{"error": {"code": "auth", "exit_code": 4');
  });

  it("names every environment variable the code reads in `help environment`", async () => {
    const out = await runCli(["help", "environment"]);
    expect(out.code).toBe(0);
    const read = new Set([...sourceText(SRC).matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((match) => match[1]!));
    read.delete("PATH");
    expect(read.size).toBeGreaterThan(5);
    const expected = [
      ...read,
      "HTTPS_PROXY",
      "HTTP_PROXY",
      "NO_PROXY",
      "NO_COLOR",
      "FORCE_COLOR",
      "CI",
      "TERM",
      "XDG_CONFIG_HOME",
      "XDG_STATE_HOME",
      "TMPDIR",
    ];
    for (const name of expected) expect(out.stdout, name).toMatch(new RegExp(`\\b${name}\\b`));
  });

  it("describes input and output formats in `help formats`", async () => {
    const out = await runCli(["help", "formats"]);
    expect(out.code).toBe(0);
    for (const word of [
      ".txt",
      ".csv",
      ".tsv",
      "UTF-16",
      "csv",
      "tsv",
      "jsonl",
      "json",
      "table",
      "--join",
      "bulkcheck_status",
      "bc_",
      "--rejects",
    ])
      expect(out.stdout).toContain(word);
  });

  it("keeps every topic within 80 columns", async () => {
    for (const topic of ["exit-codes", "environment", "formats"]) {
      const out = await runCli(["help", topic]);
      expect(
        out.stdout.split("\n").filter((line) => line.length > 80),
        topic,
      ).toEqual([]);
    }
  });

  it("still prints a command's help for `help <command>`, down to config's subcommands", async () => {
    const submit = await runCli(["help", "submit"]);
    expect(submit.code).toBe(0);
    expect(submit.stdout).toMatch(/^Usage: bulkcheck submit \[options\] <file>/);
    const set = await runCli(["help", "config", "set"]);
    expect(set.stdout).toMatch(/^Usage: bulkcheck config set \[options\] <key> \[value\]/);
    const root = await runCli(["help"]);
    expect(root.stdout).toMatch(/^Usage: bulkcheck \[options\] \[command\]/);
    expect(root.stdout).toContain("bulkcheck help environment");
  });

  it("refuses an unknown topic with exit 2, naming the commands and topics", async () => {
    const out = await runCli(["help", "colours"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('There is no command or help topic "colours".');
    expect(out.stderr).toContain("Topics: exit-codes, environment, formats, query.");
  });

  it.each([
    ["status", ["--json", "--quiet", "--no-color", "--base-url <url>", "--profile <name>", "--verbose"], []],
    ["validate", ["--json", "--quiet", "--no-color", "--verbose"], ["--base-url", "--profile"]],
    ["config list", ["--json", "--profile <name>"], ["--base-url"]],
  ])("lists the global flags `%s` honours in its help", async (command, honoured, ignored) => {
    const out = await runCli([...command.split(" "), "--help"]);
    const globals = out.stdout.split("Global Options:\n")[1]?.split("\n\n")[0] ?? "";
    for (const flag of honoured) expect(globals).toContain(flag);
    for (const flag of ignored) expect(globals).not.toContain(flag);
    expect(globals).not.toContain("--version");
  });
});
