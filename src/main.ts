import { readFileSync } from "node:fs";
import { packageFile } from "./package-files.js";
import { CommanderError } from "./cli/commander.js";
import { commandLine } from "./cli/command-line.js";
import { createPrinter, processRuntime, type Context, type GlobalOptions, type Invoke, type Runtime } from "./cli/context.js";
import { EXIT_CODES } from "./cli/exit-codes.js";
import { describeFailure } from "./cli/failure.js";
import type { Printer } from "./cli/printer.js";
import { buildProgram } from "./cli/program.js";

const VERSION = (JSON.parse(readFileSync(packageFile("package.json"), "utf8")) as { version: string }).version;

/** What a command runs with (config, store, client), wired when one runs: building the tree for --help needs none of it. */
const services = () => import("./cli/services.js");

/**
 * Runs bulkcheck with the given arguments and returns the exit code. The only
 * place errors become exit codes; bin/bulkcheck.js sets process.exitCode from it.
 */
export async function main(argv: readonly string[], runtime: Runtime = processRuntime()): Promise<number> {
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
  const invoke: Invoke = async (cmd, run) => {
    globals = cmd.optsWithGlobals();
    context = await (await services()).createContext(runtime, globals, argv);
    try {
      await run(context);
      // The command did its work; an expression that failed on some of what it printed makes it exit 2 still.
      const filterFailure = context.printer.filterFailure();
      if (filterFailure) throw filterFailure;
    } catch (error) {
      throw context.explain(error, resumeHint(cmd.name(), argv));
    }
  };
  try {
    await buildProgram(runtime, invoke, VERSION, { jsonErrors, main, argv }).parseAsync([...argv], { from: "user" });
    return EXIT_CODES.ok;
  } catch (error) {
    return report(error, context?.printer ?? createPrinter(runtime, globals), runtime.signal);
  } finally {
    await context?.dispose();
  }
}

/** `option` among the options (not after `--`, where arguments are only arguments). */
function wantsOption(argv: readonly string[], option: string): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes(option);
}

function report(error: unknown, printer: Printer, signal: AbortSignal): number {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) return EXIT_CODES.ok; // help and --version end here too
    printer.failure(usageFailure(error.code, error.message));
    return EXIT_CODES.usage;
  }
  const failure = describeFailure(error, signal);
  printer.failure(failure);
  if (!failure.silent) printStack(printer, error);
  return failure.exitCode;
}

function usageFailure(code: string, message: string) {
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
