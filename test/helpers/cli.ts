import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as readline from "node:readline";
import { PassThrough, Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { main } from "../../src/main.js";
import { inject } from "vitest";
import type { Runtime } from "../../src/cli/context.js";

export const BIN = fileURLToPath(new URL("../../bin/bulkcheck.js", import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  /** Pretend stdout/stderr/stdin are terminals. */
  tty?: boolean;
  /** With tty: the terminal supports colour (`hasColors()` answers true). */
  colors?: boolean;
  /** With tty: the terminal's width (default 100). */
  columns?: number;
  signal?: AbortSignal;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  cwd?: string;
}

/**
 * The XDG_CACHE_HOME of every process the tests spawn: Node 22+ keeps bulkcheck's compiled
 * code there (bin/bulkcheck.js), in one directory for the test run, not in each test's HOME.
 */
export const CACHE_HOME = inject("cacheHome");

export function tempDir(prefix = "bulkcheck-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

function collector(tty: boolean, colors = false, columns = 100) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; hasColors?: () => boolean };
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  if (tty) {
    // What a tty.WriteStream has and spinners use.
    Object.assign(stream, {
      isTTY: true,
      columns,
      hasColors: () => colors,
      cursorTo: (x: number, y?: number) => readline.cursorTo(stream, x, y),
      moveCursor: (dx: number, dy: number) => readline.moveCursor(stream, dx, dy),
      clearLine: (dir: -1 | 0 | 1) => readline.clearLine(stream, dir),
      clearScreenDown: () => readline.clearScreenDown(stream),
    });
  }
  return { stream, text: () => text };
}

/** A runtime with captured streams, a private HOME and the given clock, for running commands in-process. */
export function testRuntime(options: RunOptions = {}) {
  const stdout = collector(Boolean(options.tty), options.colors, options.columns);
  const stderr = collector(Boolean(options.tty), options.colors, options.columns);
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]) as Readable & { isTTY?: boolean };
  if (options.tty) stdin.isTTY = true;
  const runtime: Runtime = {
    io: { stdin, stdout: stdout.stream, stderr: stderr.stream },
    env: { PATH: process.env.PATH, HOME: tempDir(), CI: "", ...options.env },
    now: options.now ?? Date.now,
    sleep: options.sleep ?? ((ms, signal) => delay(ms, undefined, signal ? { signal } : {})),
    random: () => 0.5,
    signal: options.signal ?? new AbortController().signal,
    cwd: options.cwd ?? process.cwd(),
  };
  return { runtime, stdout: stdout.text, stderr: stderr.text };
}

/** Runs bulkcheck in-process with captured streams: fast, and the same code path as the binary. */
export async function runCli(argv: string[], options: RunOptions = {}): Promise<CliResult> {
  const { runtime, stdout, stderr } = testRuntime(options);
  const code = await main(argv, runtime);
  return { code, stdout: stdout(), stderr: stderr() };
}

export interface SpawnOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  /** Write `stdin` but leave it open, like a producer that has not finished; the test ends it (`child.stdin.end()`). */
  stdinOpen?: boolean;
  cwd?: string;
  /** A command the binary runs under, e.g. ["prlimit", "--fsize=16384"]. */
  prefix?: readonly string[];
}

/** Spawns the built binary (bin/bulkcheck.js → dist): the real process, exit code and signals. */
export function spawnCli(argv: string[], options: SpawnOptions = {}) {
  const [command, ...args] = [...(options.prefix ?? []), process.execPath, BIN, ...argv];
  const child = spawn(command!, args, {
    env: { PATH: process.env.PATH, HOME: tempDir(), XDG_CACHE_HOME: CACHE_HOME, ...options.env },
    cwd: options.cwd,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  // A child that stops reading its stdin (it failed, or the list was open) closes the pipe under what the test writes.
  child.stdin.on("error", () => undefined);
  if (options.stdinOpen) {
    child.stdin.write(options.stdin ?? "");
  } else {
    child.stdin.end(options.stdin ?? "");
  }
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr }));
  });
  return { child, done, output: () => ({ stdout, stderr }) };
}

export async function runBin(argv: string[], options: SpawnOptions = {}): Promise<CliResult> {
  return spawnCli(argv, options).done;
}

const RUNNING_AS_ROOT = process.getuid?.() === 0;

/**
 * What makes file modes bite for a spawned binary: nothing for an ordinary user;
 * for root, which reads and writes whatever the modes say, setpriv dropping the
 * capabilities that let it (root stays root, so it still reaches files under a
 * private directory). Undefined when root has no setpriv to run it under.
 */
export function fileModesPrefix(): readonly string[] | undefined {
  if (!RUNNING_AS_ROOT) return [];
  const found = spawnSync("setpriv", ["--version"]);
  return found.error ? undefined : ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"];
}
