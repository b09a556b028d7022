import { describe, expect, it } from "vitest";
import type { CommandUnknownOpts } from "../../src/cli/commander.js";
import type { Invoke } from "../../src/cli/context.js";
import { buildProgram } from "../../src/cli/program.js";
import { main } from "../../src/main.js";
import { runCli, testRuntime } from "../helpers/cli.js";

const runsNothing: Invoke = async () => undefined;

/** The names of the commands the tree built for `argv` holds. */
function commandsBuiltFor(argv?: string[]): string[] {
  return buildProgram(testRuntime().runtime, runsNothing, "0.0.0", { main, argv }).commands.map((command) => command.name());
}

/** Every command of the whole tree by its path (`config set`), subcommands included. */
function commandPaths(command: CommandUnknownOpts, path: string[] = []): string[][] {
  return command.commands.flatMap((child) => [[...path, child.name()], ...commandPaths(child, [...path, child.name()])]);
}

describe("the assembled program", () => {
  it("lists the commands in the root help in the contract's order", async () => {
    const { code, stdout } = await runCli(["--help"]);
    expect(code).toBe(0);
    const commands = stdout
      .split("Commands:\n")[1]!
      .split("\n\n")[0]!
      .split("\n")
      .flatMap((line) => /^ {2}([a-z-]+)/.exec(line)?.slice(1) ?? []);
    expect(commands).toEqual([
      "submit",
      "status",
      "wait",
      "download",
      "balance",
      "validate",
      "retry-failed",
      "report",
      "runs",
      "ledger",
      "store",
      "config",
      "sandbox",
      "demo",
      "completion",
      "help",
    ]);
  });

  it.each([
    [["config", "get"], "error: missing required argument 'key'"],
    [["config", "set", "base-url", "a", "b"], "error: too many arguments for 'set'"],
    [["status", "--limit", "0"], "error: option '--limit <n>' argument '0' is invalid"],
    [["sandbox", "--result-format", "gz"], "error: option '--result-format <format>' argument 'gz' is invalid"],
  ])("gives every command, down to config's subcommands, the root's usage errors: %j", async (argv, message) => {
    const { code, stdout, stderr } = await runCli(argv);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(message);
    // Printed as every other error is (it was commander's own "(run with --help for usage)").
    expect(stderr).toContain("Run bulkcheck --help for usage.");
  });

  it("prints commander's usage errors with the same prefix and colour as every other error", async () => {
    const terminal = { tty: true, colors: true };
    const commanders = await runCli(["status", "--limit", "0"], terminal);
    const ours = await runCli(["validate", "list.txt", "--country", "UK"], terminal);
    const prefix = "\u001b[31merror:\u001b[39m ";
    for (const out of [commanders, ours]) {
      expect(out.code).toBe(2);
      expect(out.stderr.startsWith(prefix), JSON.stringify(out.stderr)).toBe(true);
    }
    const plain = await runCli(["status", "--limit", "0", "--no-color"], terminal);
    expect(plain.stderr).toMatch(/^error: option '--limit <n>'/);
  });

  it("writes a subcommand's help to the injected stdout", async () => {
    const { code, stdout } = await runCli(["config", "unset", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: bulkcheck config unset \[options\] <key>/);
  });

  it("builds only the command the arguments name, found past the root's flags, unless it reads the whole tree", () => {
    const all = commandsBuiltFor();
    expect(all).toHaveLength(16);
    expect(commandsBuiltFor(["status", "--help"])).toEqual(["status"]);
    expect(commandsBuiltFor(["--json", "--base-url", "http://127.0.0.1:1", "--profile", "status", "config", "get", "key"])).toEqual([
      "config",
    ]);
    expect(commandsBuiltFor(["-q", "--profile=work", "--no-color", "download", "a1"])).toEqual(["download"]);
    for (const argv of [[], ["--help"], ["help", "status"], ["completion", "bash"], ["statsu"], ["--nope", "status"], ["--base-url"]]) {
      expect(commandsBuiltFor(argv), JSON.stringify(argv)).toEqual(all);
    }
  });

  it("prints each command's help alike from the one command built and from the whole tree", async () => {
    const tree = buildProgram(testRuntime().runtime, runsNothing, "0.0.0", { main });
    for (const path of commandPaths(tree).filter(([first]) => first !== "help")) {
      const alone = await runCli([...path, "--help"]);
      const fromTree = await runCli(["help", ...path]);
      expect(alone.code, path.join(" ")).toBe(0);
      expect(alone.stdout, path.join(" ")).toBe(fromTree.stdout);
    }
  });
});
