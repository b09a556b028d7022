import { readFileSync } from "node:fs";
import { BulkcheckError } from "./errors.js";
import { packageFile } from "./package-files.js";
import {
  createContext,
  createPrinter,
  processRuntime,
  type Context,
  type GlobalOptions,
  type Invoke,
  type Runtime,
} from "./cli/context.js";
import { commandLine } from "./cli/command-line.js";
import { EXIT_CODES, exitCodeFor } from "./cli/exit-codes.js";
import type { Printer } from "./cli/printer.js";

const VERSION = (JSON.parse(readFileSync(packageFile("package.json"), "utf8")) as { version: string }).version;

/**
 * Runs bulkcheck with the given arguments and returns the exit code. The only
 * place errors become exit codes; bin/bulkcheck.js sets process.exitCode from it.
 */
export async function main(argv: readonly string[], runtime: Runtime = processRuntime()): Promise<number> {
  // `--version` alone is answered before commander loads: start-up is most of its cost.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    runtime.io.stdout.write(`${VERSION}\n`);
    return EXIT_CODES.ok;
  }
  const { buildProgram } = await import("./cli/program.js");
  let context: Context | undefined;
  let globals: GlobalOptions = {};
  const invoke: Invoke = async (cmd, run) => {
    globals = cmd.optsWithGlobals();
    context = await createContext(runtime, globals);
    try {
      await run(context);
    } catch (error) {
      throw context.deadline.explain(error, resumeHint(cmd.name(), argv));
    }
  };
  try {
    await buildProgram(runtime, invoke, VERSION).parseAsync([...argv], { from: "user" });
    return EXIT_CODES.ok;
  } catch (error) {
    return await report(error, context?.printer ?? createPrinter(runtime, globals), runtime.signal.aborted);
  } finally {
    await context?.dispose();
  }
}

async function report(error: unknown, printer: Printer, interrupted: boolean): Promise<number> {
  const { CommanderError } = await import("./cli/commander.js");
  if (error instanceof CommanderError) {
    // commander has already printed its message; help and --version end here too.
    return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
  if (error instanceof BulkcheckError) {
    printer.error(error.message, error.hint);
    printStack(printer, error);
    return exitCodeFor(error.kind);
  }
  if (interrupted) {
    printer.error("Interrupted.");
    return EXIT_CODES.interrupted;
  }
  const message = error instanceof Error ? error.message : String(error);
  printer.error(`unexpected: ${message}`, printer.options.verbose ? undefined : "Run again with --verbose for details.");
  printStack(printer, error);
  return EXIT_CODES.unexpected;
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
