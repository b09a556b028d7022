import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { commandDocs, type CommandDoc } from "../../src/cli/reference/command-docs.js";
import { generateReference } from "../../src/cli/reference/generate.js";
import { manPage, shellLines } from "../../src/cli/reference/man.js";
import { runCli } from "../helpers/cli.js";

const ROOT = new URL("../../", import.meta.url);
const PKG = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { version: string; homepage: string };

describe("the command reference and the man page", () => {
  it("are committed as the command tree generates them", () => {
    for (const [path, generated] of Object.entries(generateReference(PKG))) {
      const committed = readFileSync(fileURLToPath(new URL(path, ROOT)), "utf8");
      expect(committed, `${path} differs from what the command tree generates: run \`npm run docs\` and commit it`).toBe(generated);
    }
  });

  it("come out the same whatever the terminal's width and colours", () => {
    const first = generateReference(PKG);
    const columns = Object.getOwnPropertyDescriptor(process.stdout, "columns");
    const forceColor = process.env.FORCE_COLOR;
    Object.defineProperty(process.stdout, "columns", { value: 40, configurable: true });
    process.env.FORCE_COLOR = "3";
    try {
      expect(generateReference(PKG)).toEqual(first);
    } finally {
      if (columns) Object.defineProperty(process.stdout, "columns", columns);
      else delete (process.stdout as { columns?: number }).columns;
      if (forceColor === undefined) delete process.env.FORCE_COLOR;
      else process.env.FORCE_COLOR = forceColor;
    }
  });

  it("hold every command's usage, options and examples as its --help prints them", async () => {
    for (const command of commandDocs(PKG.version)) {
      const out = await runCli([...command.path.split(" ").slice(1), "--help"]);
      expect(out.code).toBe(0);
      const help = out.stdout.replace(/\s+/g, " ");
      expect(help).toContain(`Usage: ${command.usage}`);
      for (const { term, description } of [...command.arguments, ...command.options]) {
        expect(help).toContain(term);
        expect(help).toContain(description.replace(/\s+/g, " "));
      }
      for (const block of command.after)
        if (block.kind === "examples") for (const line of block.commands) expect(help).toContain(`$ ${line}`);
    }
  });
});

describe("the man page", () => {
  const doc = (description: string): CommandDoc => ({
    path: "bulkcheck",
    depth: 0,
    usage: "bulkcheck [options]",
    description,
    arguments: [],
    options: [{ term: "--from <file>", description: "'quoted, or \\ back-slashed" }],
    globalOptions: [],
    subcommands: [],
    after: [{ kind: "paragraph", text: ".so /etc/passwd – read as text" }],
  });

  it("escapes help text so that no line of it is read as a request", () => {
    const page = manPage([doc("check lists")], PKG);
    expect(page).toContain("\\&'quoted, or \\e back\\-slashed");
    expect(page).toContain("\\&.so /etc/passwd \\[u2013] read as text");
    expect(page.split("\n").filter((line) => /^[.']/.test(line) && !/^\.(TH|SH|SS|PP|TP|RS|RE|EX|EE|in|nr|ad|br)\b/.test(line))).toEqual(
      [],
    );
  });

  it("continues a long example on lines that fit 80 columns, breaking only outside quotes", () => {
    const command = `bulkcheck ledger lookup --country GB --profile production-eu "+44 7400 123456" 07400123457 --json`;
    const lines = shellLines(command);
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(7 + 4 + line.length).toBeLessThanOrEqual(80);
    expect(lines.filter((line) => line.includes('"+44 7400 123456"'))).toHaveLength(1);
    expect(lines.map((line) => line.replace(/ \\$/, "").trim()).join(" ")).toBe(command);
    expect(shellLines("bulkcheck balance")).toEqual(["bulkcheck balance"]);
  });
});
