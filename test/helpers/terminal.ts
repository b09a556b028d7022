import { spawn } from "node:child_process";
import { BIN } from "./cli.js";

export interface TerminalRun {
  code: number;
  /** Everything the terminal showed (stdout and stderr together, as a terminal mixes them). */
  screen: string;
}

/** What to type once the screen shows some text: `\u0003` is Ctrl-C, `\u0004` Ctrl-D. */
export interface Keystroke {
  after: string;
  send: string;
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs the built binary in a real pseudo-terminal (util-linux `script`), so stdin,
 * stdout and stderr are all terminals, as for a person at a shell, and types each
 * keystroke once the screen shows its `after` text. `script -e` exits with the
 * command's own exit code.
 */
export function runInTerminal(
  argv: readonly string[],
  options: { env: Record<string, string | undefined>; cwd: string; keys?: readonly Keystroke[] },
): Promise<TerminalRun> {
  const command = [process.execPath, BIN, ...argv].map(shellQuote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, TERM: "xterm", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const keys = [...(options.keys ?? [])];
  let screen = "";
  const typeWhenDue = () => {
    while (keys.length > 0 && screen.includes(keys[0]!.after)) child.stdin.write(keys.shift()!.send);
  };
  child.stdout.on("data", (chunk: Buffer) => {
    screen += chunk.toString("utf8");
    typeWhenDue();
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? -1, screen }));
  });
}
