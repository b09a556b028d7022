import { spawn, type ChildProcess } from "node:child_process";
import { afterEach } from "vitest";
import { BIN } from "./cli.js";

/** Sessions still running when a test ends (it failed or timed out): closed, so nothing is left behind. */
const running = new Set<ChildProcess>();
afterEach(() => {
  // Closing the terminal hangs up its session: the command gets SIGHUP, as when a window is closed.
  for (const child of running) child.kill("SIGKILL");
  running.clear();
});

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

export interface TerminalSession {
  screen(): string;
  type(text: string): void;
  done: Promise<TerminalRun>;
}

export interface TerminalOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  keys?: readonly Keystroke[];
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The shell command that runs the built binary with `argv`. */
export function bulkcheckCommand(argv: readonly string[]): string {
  return [process.execPath, BIN, ...argv].map(shellQuote).join(" ");
}

/**
 * Runs a shell command in a real pseudo-terminal (util-linux `script`), so
 * stdin, stdout and stderr are all terminals and the command is the terminal's
 * foreground job, as for a person at a shell; types each keystroke once the
 * screen shows its `after` text. `script -e` exits with the command's own code.
 */
export function startInTerminal(command: string, options: TerminalOptions): TerminalSession {
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, TERM: "xterm", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.add(child);
  child.once("close", () => running.delete(child));
  const keys = [...(options.keys ?? [])];
  let screen = "";
  const typeWhenDue = () => {
    while (keys.length > 0 && screen.includes(keys[0]!.after)) child.stdin.write(keys.shift()!.send);
  };
  child.stdout.on("data", (chunk: Buffer) => {
    screen += chunk.toString("utf8");
    typeWhenDue();
  });
  const done = new Promise<TerminalRun>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? -1, screen }));
  });
  return { screen: () => screen, type: (text) => child.stdin.write(text), done };
}

/**
 * Runs the built binary with `argv` in a pseudo-terminal; see startInTerminal.
 * `exec`, so the shell `script` starts is not left waiting (and killed by a
 * Ctrl-C meant for bulkcheck, which would make the exit code the shell's).
 */
export function runInTerminal(argv: readonly string[], options: TerminalOptions): Promise<TerminalRun> {
  return startInTerminal(`exec ${bulkcheckCommand(argv)}`, options).done;
}

/**
 * The lines a terminal shows after `output` (as `script` records it): printable text,
 * CR, LF, backspace, and the cursor and erase sequences spinners use (CSI n A/B/C/D/G,
 * K, J); other sequences (colours, cursor visibility) change nothing on the lines.
 */
export function renderScreen(output: string): string[] {
  const screen: string[][] = [[]];
  let row = 0;
  let column = 0;
  const line = () => (screen[row] ??= []);
  // eslint-disable-next-line no-control-regex -- terminal control sequences are what it reads
  const tokens = output.matchAll(/\u001b\[([?\d;]*)([A-Za-z])|\u001b[()][A-Za-z0-9]|\u001b.|[\s\S]/gu);
  for (const [token, parameters, command] of tokens) {
    if (command !== undefined) {
      const n = Number(parameters?.split(";")[0] || 1);
      if (command === "A") row = Math.max(0, row - n);
      else if (command === "B") row += n;
      else if (command === "C") column += n;
      else if (command === "D") column = Math.max(0, column - n);
      else if (command === "G") column = n - 1;
      else if (command === "K") {
        const mode = Number(parameters || 0);
        if (mode === 0) line().splice(column);
        else if (mode === 1) line().fill(" ", 0, column + 1);
        else screen[row] = [];
      } else if (command === "J") screen.splice(row + 1);
    } else if (token === "\r") column = 0;
    else if (token === "\n") {
      row++;
      column = 0;
    } else if (token === "\b") column = Math.max(0, column - 1);
    else if (!token.startsWith("\u001b")) {
      const cells = line();
      while (cells.length < column) cells.push(" ");
      cells[column++] = token;
    }
  }
  return Array.from({ length: screen.length }, (_, i) => (screen[i] ?? []).join("").trimEnd());
}
