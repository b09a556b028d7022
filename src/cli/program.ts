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
 * `main` is bulkcheck's entry point, which the demo runs its steps through.
 */
export function buildProgram(runtime: Runtime, invoke: Invoke, version: string, options: { jsonErrors?: boolean; main: Main }) {
  const program = new Command("bulkcheck")
    .description("Check phone lists in bulk with the checking service: prepare, submit, wait, download, join.")
    .version(version, "-V, --version")
    .option("--json", "print machine-readable JSON on stdout")
    .option("-q, --quiet", "print only data and errors")
    .option("--no-color", "never colour output (NO_COLOR is honoured too)")
    .option("--base-url <url>", "service base URL (overrides BULKCHECK_BASE_URL and the profile)")
    .option("--profile <name>", 'config profile (default: BULKCHECK_PROFILE or "default")')
    .option("--verbose", "log each request on stderr (keys redacted) and show stack traces")
    .addHelpText(
      "after",
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
  const commands = [
    submitCommand,
    statusCommand,
    waitCommand,
    downloadCommand,
    balanceCommand,
    validateCommand,
    retryFailedCommand,
    reportCommand,
    runsCommand,
    ledgerCommand,
    storeCommand,
    configCommand,
    sandboxCommand,
    (invoke: Invoke) => demoCommand(invoke, options.main),
  ];
  for (const command of commands) program.addCommand(command(invoke));
  program.addCommand(completionCommand(invoke));
  program.addCommand(helpCommand(runtime.io));
  inheritSettings(program);
  return program;
}

/**
 * Global flags a command ignores, so its help lists only those it honours:
 * local commands never reach the service (--base-url) or read a profile.
 */
const IGNORED_GLOBALS: Readonly<Record<string, readonly string[]>> = {
  validate: ["baseUrl", "profile"],
  sandbox: ["baseUrl", "profile"],
  demo: ["json", "quiet", "baseUrl", "profile"],
  config: ["baseUrl"],
  help: ["json", "quiet", "color", "baseUrl", "profile", "verbose"],
  completion: ["json", "quiet", "color", "baseUrl", "verbose"],
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
