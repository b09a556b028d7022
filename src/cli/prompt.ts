import { createInterface } from "node:readline/promises";
import { Writable } from "node:stream";
import type { IO } from "./io.js";

/** Reads a line from a terminal without echoing it (for the API key). */
export async function promptSecret(io: IO, question: string): Promise<string> {
  io.stderr.write(question);
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: io.stdin, output: muted, terminal: true });
  try {
    return await rl.question("");
  } finally {
    rl.close();
    io.stderr.write("\n");
  }
}

/** Asks a yes/no question on the terminal; anything but y/yes is no. */
export async function confirm(io: IO, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: Boolean(io.stdin.isTTY) });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
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
