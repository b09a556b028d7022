import { createInterface, type Interface } from "node:readline/promises";
import { Writable } from "node:stream";
import { InterruptedError } from "../errors.js";
import type { IO } from "./io.js";
import type { Printer } from "./printer.js";

/** What a prompt needs besides the terminal: the run's Ctrl-C/SIGTERM, and what to say when the user backs out. */
export interface PromptOptions {
  signal: AbortSignal;
  /** What a cancelled prompt ends the run with (exit 130, or 143 on SIGTERM). */
  cancelled: { message: string; hint?: string };
}

/** The message every cancelled prompt before an upload ends with. */
export const NOTHING_UPLOADED = "Cancelled; nothing was uploaded.";

/**
 * Reads a line from a terminal without echoing it (for the API key). Every prompt goes
 * through the printer, which draws no progress line while the question waits.
 */
export function promptSecret(printer: Printer, question: string, options: PromptOptions): Promise<string> {
  return printer.asking(() => readSecret(printer.io, question, options));
}

async function readSecret(io: IO, question: string, options: PromptOptions): Promise<string> {
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  // The terminal stops echoing (raw mode) before the question shows: what is typed or pasted as soon as it does is never shown.
  const rl = createInterface({ input: io.stdin, output: muted, terminal: true });
  io.stderr.write(question);
  try {
    return await ask(rl, "", options);
  } finally {
    rl.close();
    io.stderr.write("\n");
  }
}

/** Asks a yes/no question on the terminal; anything but y/yes is no. No progress line is drawn while it waits. */
export function confirm(printer: Printer, question: string, options: PromptOptions): Promise<boolean> {
  return printer.asking(() => askYesNo(printer.io, question, options));
}

async function askYesNo(io: IO, question: string, options: PromptOptions): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: Boolean(io.stdin.isTTY) });
  try {
    const answer = await ask(rl, `${question} [y/N] `, options);
    return /^y(es)?$/i.test(answer.trim());
  } catch (error) {
    io.stderr.write("\n"); // the cancelled prompt's line stays as it was; what follows starts below it
    throw error;
  } finally {
    rl.close();
  }
}

/**
 * readline answers Ctrl-C and Ctrl-D at a prompt (and an aborted signal) by
 * rejecting with an AbortError: that is the user backing out, not a failure.
 */
async function ask(rl: Interface, query: string, options: PromptOptions): Promise<string> {
  try {
    return await rl.question(query, { signal: options.signal });
  } catch (error) {
    if ((error as Error | undefined)?.name === "AbortError") {
      throw new InterruptedError(options.cancelled.message, { hint: options.cancelled.hint, cause: error });
    }
    throw error;
  }
}

/** Interactive only when a person can answer: stdin and stderr are terminals. */
export function canPrompt(io: IO): boolean {
  return Boolean(io.stdin.isTTY && io.stderr.isTTY);
}

/** All of stdin as UTF-8 (decoded once, so a character split across chunks survives). */
export async function readAllStdin(io: IO): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}
