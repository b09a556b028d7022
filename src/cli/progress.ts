import { terminalText } from "../ansi.js";
import type { Printer } from "./printer.js";
import type { Env } from "./io.js";

/**
 * Progress for long operations: an ora spinner on a terminal; elsewhere only the
 * persisted lines appear (one per change), so logs stay short.
 */
export interface Progress {
  /** True when a spinner is drawn (a terminal): only then is updating its text worth anything. */
  readonly live: boolean;
  /** The spinner's text (elapsed time and the like); not printed without a spinner. */
  update(text: string): void;
  /** Prints a line that stays (above the spinner on a terminal). */
  persist(text: string): void;
  stop(): void;
}

/**
 * Spinners only on a terminal stderr that has a width, never with --json,
 * --quiet, --verbose (its log lines would cut into the spinner's), or in CI. A
 * terminal that reports no width (0 columns, as a pseudo-terminal without a
 * window size does) gets lines: ora divides by the width to know how many lines
 * to clear, and with 0 it never stops clearing.
 */
export function spinnerAllowed(printer: Printer, env: Env): boolean {
  const { json, quiet, verbose } = printer.options;
  const { isTTY, columns } = printer.io.stderr;
  return Boolean(isTTY) && Boolean(columns) && !json && !quiet && !verbose && !env.CI;
}

const REDRAW_MS = 100;

/** `now`: the clock that spaces the redraws (the command's, which tests drive). */
export async function createProgress(printer: Printer, env: Env, now: () => number = Date.now): Promise<Progress> {
  if (!spinnerAllowed(printer, env)) return lineProgress(printer);
  const { default: ora } = await import("ora");
  const spinner = ora({
    stream: printer.io.stderr,
    color: printer.options.colour ? "cyan" : false,
    isEnabled: true,
    discardStdin: false,
  });
  // Every other line printed meanwhile clears the spinner first and draws it again below; a question stops it until answered.
  const release = printer.showLiveLine({
    start: () => spinner.start(),
    // Stopping a spinner not drawn would still move the cursor to the first column (under a question, over its answer).
    stop: () => {
      if (spinner.isSpinning) spinner.stop();
    },
    clear: () => spinner.clear(),
    render: () => spinner.render(),
  });
  let shownAt = -Infinity;
  /** Whether the text was changed since it was last drawn (the throttle held it back). */
  let undrawn = false;
  return {
    live: true,
    update(update) {
      // Written straight to the terminal, as the printer's notes are: a task's fields or a file's name may be in it.
      const text = terminalText(update, { singleLine: true });
      if (text === spinner.text) return;
      spinner.text = text;
      // Not drawn while a question waits, nor once stopped (an event on its way when the run stopped it): the text waits for the next start.
      if (!spinner.isSpinning) return;
      // Shown at once the first time, then at most every tenth of a second: ora itself redraws only on its next frame.
      undrawn = now() - shownAt < REDRAW_MS;
      if (undrawn) return;
      shownAt = now();
      spinner.render();
    },
    persist(text) {
      printer.note(text);
    },
    stop() {
      // The last text is drawn before the spinner goes, however soon after the one before it came
      // (the tasks checked in one round, the last finishing): a run stopping before ora's next frame never shows stale counts last.
      if (undrawn && spinner.isSpinning) spinner.render();
      release();
    },
  };
}

function lineProgress(printer: Printer): Progress {
  return {
    live: false,
    update() {},
    persist(text) {
      printer.note(text);
    },
    stop() {},
  };
}
