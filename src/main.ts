import { readFileSync } from "node:fs";
import { packageFile } from "./package-files.js";
import { CommanderError } from "./cli/commander.js";
import { commandLine } from "./cli/command-line.js";
import { createPrinter, processRuntime, type Context, type GlobalOptions, type Invoke, type Runtime } from "./cli/context.js";
import { EXIT_CODES } from "./cli/exit-codes.js";
import { describeFailure, type Failure } from "./cli/failure.js";
import type { Printer } from "./cli/printer.js";
import type { CommandUnknownOpts } from "./cli/commander.js";
import { buildProgram } from "./cli/program.js";
import type { CommandEnd } from "./cli/notifications.js";

const VERSION = (JSON.parse(readFileSync(packageFile("package.json"), "utf8")) as { version: string }).version;

/** What a command runs with (config, store, client), wired when one runs: building the tree for --help needs none of it. */
const services = () => import("./cli/services.js");

/** What tells someone a command ended (--on-done, --notify): loaded only by a command that has something to tell. */
const notifications = () => import("./cli/notifications.js");

/**
 * Runs bulkcheck with the given arguments and returns the exit code. The only
 * place errors become exit codes; bin/bulkcheck.js sets process.exitCode from it.
 */
export async function main(argv: readonly string[], runtime?: Runtime): Promise<number> {
  if (runtime) return mainWith(argv, runtime);
  const own = processRuntime();
  try {
    return await mainWith(argv, own);
  } finally {
    own.release();
  }
}

async function mainWith(argv: readonly string[], runtime: Runtime): Promise<number> {
  // `--version` alone is answered before the command tree is built.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    runtime.io.stdout.write(`${VERSION}\n`);
    return EXIT_CODES.ok;
  }
  // With --json a failure is one JSON object on stderr, commander's own usage errors included.
  const jsonErrors = wantsOption(argv, "--json");
  let context: Context | undefined;
  // Until the flags are parsed (a usage error may stop that), the two that shape how an error is printed.
  let globals: GlobalOptions = { json: jsonErrors, ...(wantsOption(argv, "--no-color") ? { color: false } : {}) };
  let ending: ((end: CommandEnd) => Promise<void>) | undefined;
  const invoke: Invoke = async (cmd, run) => {
    globals = cmd.optsWithGlobals();
    context = await (await services()).createContext(runtime, globals, argv);
    try {
      if (takes(cmd, "--on-done")) {
        ending = await (await notifications()).notificationsOf(context, cmd.name(), cmd.opts(), takes(cmd, "--wait"), runtime.signal);
      }
      await run(context);
      // The command did its work; an expression that failed on some of what it printed makes it exit 2 still.
      const filterFailure = context.printer.filterFailure();
      if (filterFailure) throw filterFailure;
    } catch (error) {
      throw context.explain(error, resumeHint(cmd.name(), argv));
    }
  };
  let exitCode: number;
  let failure: Failure | undefined;
  let thrown: unknown;
  try {
    await buildProgram(runtime, invoke, VERSION, { jsonErrors, main, argv }).parseAsync([...argv], { from: "user" });
    // --exit-on-change: a success in which something changed has an exit status of its own.
    exitCode = context?.outcome.changed ? EXIT_CODES.changed : EXIT_CODES.ok;
  } catch (error) {
    thrown = error;
    failure = failureOf(error, runtime.signal);
    exitCode = failure.exitCode;
  } finally {
    await context?.dispose();
  }
  // Stopped by Ctrl-C or SIGTERM, it stops: nothing more runs.
  if (ending && !runtime.signal.aborted) await ending({ exitCode, failure });
  // Last, after whatever the notifications printed: with --json, a failure is the last line of stderr.
  if (failure) report(failure, thrown, context?.printer ?? createPrinter(runtime, globals));
  return exitCode;
}

/** Whether the command declares `flag`. */
function takes(cmd: CommandUnknownOpts, flag: string): boolean {
  return cmd.options.some((option) => option.long === flag);
}

/** `option` among the options (not after `--`, where arguments are only arguments). */
function wantsOption(argv: readonly string[], option: string): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes(option);
}

/** Why the command failed, with its exit code. */
function failureOf(error: unknown, signal: AbortSignal): Failure {
  if (error instanceof CommanderError) {
    // Help and --version end here too, with exit 0 and nothing to say.
    if (error.exitCode === 0) return { code: "usage", exitCode: EXIT_CODES.ok, message: "", silent: true };
    return usageFailure(error.code, error.message);
  }
  return describeFailure(error, signal);
}

/** Prints why the command failed (and, with --verbose, where: commander's own refusals have no stack worth showing). */
function report(failure: Failure, error: unknown, printer: Printer): void {
  printer.failure(failure);
  if (!failure.silent && !(error instanceof CommanderError)) printStack(printer, error);
}

function usageFailure(code: string, message: string): Failure {
  // Without a command, commander has just printed the help itself.
  if (code === "commander.help") return { code: "usage" as const, exitCode: EXIT_CODES.usage, message: "No command given." };
  return {
    code: "usage" as const,
    exitCode: EXIT_CODES.usage,
    message: message.replace(/^error: /, ""),
    hint: "Run bulkcheck --help for usage.",
  };
}

/** How to go on after --timeout stopped a command: the same command again, which repeats nothing already done. */
function resumeHint(command: string, argv: readonly string[]): string {
  const again = commandLine(argv);
  return RESUMABLE.has(command) ? `Resume with: ${again}` : `Try again, with a longer --timeout: ${again}`;
}

/** Commands whose work a re-run continues (journalled uploads, waits, downloads) rather than repeats. */
const RESUMABLE = new Set(["submit", "retry-failed", "wait", "download"]);

function printStack(printer: Printer, error: unknown): void {
  if (error instanceof Error && error.stack) printer.debug(error.stack);
}
