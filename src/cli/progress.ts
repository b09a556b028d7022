import type { Printer } from "./printer.js";
import type { Env } from "./io.js";

/**
 * Progress for long operations: an ora spinner on a terminal; elsewhere only the
 * persisted lines appear (one per change), so logs stay short.
 */
export interface Progress {
  /** The spinner's text (elapsed time and the like); not printed without a spinner. */
  update(text: string): void;
  /** Prints a line that stays (above the spinner on a terminal). */
  persist(text: string): void;
  stop(): void;
}

/** Spinners only on a terminal stderr, never with --json, --quiet, --verbose (its log lines would cut into the spinner's), or in CI. */
export function spinnerAllowed(printer: Printer, env: Env): boolean {
  const { json, quiet, verbose } = printer.options;
  return Boolean(printer.io.stderr.isTTY) && !json && !quiet && !verbose && !env.CI;
}

export async function createProgress(printer: Printer, env: Env): Promise<Progress> {
  if (!spinnerAllowed(printer, env)) return lineProgress(printer);
  const { default: ora } = await import("ora");
  const spinner = ora({
    stream: printer.io.stderr,
    color: printer.options.colour ? "cyan" : false,
    isEnabled: true,
    discardStdin: false,
  }).start();
  return {
    update(text) {
      spinner.text = text;
    },
    persist(text) {
      spinner.clear();
      printer.io.stderr.write(text + "\n");
      spinner.render();
    },
    stop() {
      spinner.stop();
    },
  };
}

function lineProgress(printer: Printer): Progress {
  return {
    update() {},
    persist(text) {
      printer.note(text);
    },
    stop() {},
  };
}
