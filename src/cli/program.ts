import { Command, Help, type CommandUnknownOpts, type Option } from "./commander.js";
import { balanceCommand } from "./commands/balance.js";
import { completionCommand } from "./commands/completion.js";
import { configCommand } from "./commands/config.js";
import { demoCommand } from "./commands/demo.js";
import type { Main } from "./actions/demo.js";
import { downloadCommand } from "./commands/download.js";
import { ledgerCommand } from "./commands/ledger.js";
import { reportCommand } from "./commands/report.js";
import { retryFailedCommand } from "./commands/retry-failed.js";
import { runsCommand } from "./commands/runs.js";
import { sandboxCommand } from "./commands/sandbox.js";
import { statusCommand } from "./commands/status.js";
import { storeCommand } from "./commands/store.js";
import { submitCommand } from "./commands/submit.js";
import { validateCommand } from "./commands/validate.js";
import { waitCommand } from "./commands/wait.js";
import type { Invoke, Runtime } from "./context.js";
import { exitCodesHelp } from "./exit-codes.js";
import { helpCommand } from "./commands/help.js";
import { helpTopicsList } from "./help-topics.js";

/**
 * The command tree: the root with its global flags and help, and every command
 * as its module defines it (in the order help lists them). Each command module
 * loads what its run needs only when it runs, so building the tree stays cheap.
 * Given the arguments it is about to parse (`argv`), it builds of the commands only
 * the one they name, when that one runs on its own: `status --help` builds one command,
 * not sixteen (the other fifteen took about as long as loading the start-up bundle).
 * `main` is bulkcheck's entry point, which the demo runs its steps through.
 */
export function buildProgram(
  runtime: Runtime,
  invoke: Invoke,
  version: string,
  options: { jsonErrors?: boolean; main: Main; argv?: readonly string[] },
) {
  const program = globalOptions(
    new Command("bulkcheck")
      .description("Check phone lists in bulk with the checking service: prepare, submit, wait, download, join.")
      .version(version, "-V, --version"),
  )
    // Written when the root's help is shown, which `bulkcheck <command> --help` never asks for.
    .addHelpText(
      "after",
      () =>
        `\nThe API key is read from BULKCHECK_API_KEY or the profile (bulkcheck config set api-key).\n\n${exitCodesHelp()}\n\n${helpTopicsList()}\n`,
    )
    .helpCommand(false)
    .configureHelp({ showGlobalOptions: true, visibleGlobalOptions: honouredGlobalOptions })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => runtime.io.stdout.write(text),
      writeErr: (text) => (options.jsonErrors ? undefined : runtime.io.stderr.write(text)),
      // main reports commander's usage errors through the printer, as every other error: one prefix, one colour.
      outputError: () => undefined,
    });
  const commands: Record<string, () => CommandUnknownOpts> = {
    submit: () => submitCommand(invoke),
    status: () => statusCommand(invoke),
    wait: () => waitCommand(invoke),
    download: () => downloadCommand(invoke),
    balance: () => balanceCommand(invoke),
    validate: () => validateCommand(invoke),
    "retry-failed": () => retryFailedCommand(invoke),
    report: () => reportCommand(invoke),
    runs: () => runsCommand(invoke),
    ledger: () => ledgerCommand(invoke),
    store: () => storeCommand(invoke),
    config: () => configCommand(invoke),
    sandbox: () => sandboxCommand(invoke),
    demo: () => demoCommand(invoke, options.main),
    completion: () => completionCommand(invoke),
    help: () => helpCommand(runtime.io),
  };
  const named = options.argv && commandNamed(options.argv);
  const alone = named !== undefined && Object.hasOwn(commands, named) && !NEEDS_THE_TREE.has(named) ? named : undefined;
  for (const [name, command] of Object.entries(commands)) if (alone === undefined || name === alone) program.addCommand(command());
  inheritSettings(program);
  return program;
}

/** The flags of the root, which every command takes (help lists those it honours). */
function globalOptions(command: CommandUnknownOpts) {
  return command
    .option("--json", "print machine-readable JSON on stdout")
    .option("--query <expr>", "with --json, print only what this JMESPath expression selects (see: bulkcheck help query)")
    .option("-q, --quiet", "print only data and errors")
    .option("--no-color", "never colour output (NO_COLOR is honoured too)")
    .option("--base-url <url>", "service base URL (overrides BULKCHECK_BASE_URL and the profile)")
    .option("--profile <name>", 'config profile (default: BULKCHECK_PROFILE or "default")')
    .option("--verbose", "log each request on stderr (keys redacted) and show stack traces");
}

/** Commands that read the whole tree: `help <command>` finds the command in it, `completion` writes it out. */
const NEEDS_THE_TREE: ReadonlySet<string> = new Set(["help", "completion"]);

/**
 * The command `argv` names, as commander finds it: the first operand after the root's
 * flags, read by a throwaway command with the same flags. Undefined where commander
 * will not get that far (an unknown flag first, a flag missing its value): then the
 * whole tree is built and commander reports what it finds.
 */
function commandNamed(argv: readonly string[]): string | undefined {
  const probe = globalOptions(new Command())
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, outputError: () => undefined });
  try {
    return probe.parseOptions([...argv]).operands[0];
  } catch {
    return undefined;
  }
}

/**
 * Global flags a command ignores, so its help lists only those it honours:
 * local commands never reach the service (--base-url) or read a profile.
 */
const IGNORED_GLOBALS: Readonly<Record<string, readonly string[]>> = {
  validate: ["baseUrl", "profile"],
  sandbox: ["baseUrl"],
  demo: ["json", "query", "quiet", "baseUrl", "profile"],
  config: ["baseUrl"],
  help: ["json", "query", "quiet", "color", "baseUrl", "profile", "verbose"],
  completion: ["json", "query", "quiet", "color", "baseUrl", "verbose"],
};

/** What "Global Options:" lists under a command: the root's flags it honours, never --version. */
function honouredGlobalOptions(this: Help, cmd: CommandUnknownOpts): Option[] {
  let top = cmd;
  while (top.parent?.parent) top = top.parent;
  const ignored = IGNORED_GLOBALS[top.name()] ?? [];
  return Help.prototype.visibleGlobalOptions
    .call(this, cmd)
    .filter((option) => option.attributeName() !== "version" && !ignored.includes(option.attributeName()));
}

/**
 * Gives every command the root's error and output settings (exit override,
 * output streams, help after an error), as commander's `.command()` would:
 * commands built on their own and added with `addCommand` do not inherit them.
 */
function inheritSettings(parent: CommandUnknownOpts): void {
  for (const command of parent.commands) {
    command.copyInheritedSettings(parent);
    inheritSettings(command);
  }
}
