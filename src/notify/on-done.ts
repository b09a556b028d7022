import { spawn } from "node:child_process";
import type { Writable } from "node:stream";

/** After SIGTERM, how long the command has to end before SIGKILL (less when its whole time is short: a fifth of it). */
const KILL_GRACE_MS = 2_000;

/** How long an `--on-done` command may take at most, SIGKILL included: 60 s, then SIGTERM and 2 s to end. */
export const ON_DONE_WITHIN_MS = 60_000 + KILL_GRACE_MS;

/** Once the command has ended, how long what it left running in the background may keep its output open. */
const OUTPUT_GRACE_MS = 1_000;

export interface HookCommand {
  /** The program and its arguments: no shell reads them. */
  argv: readonly string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Written to its stdin, which is then closed. */
  input: string;
  /** How long it may take, stopping included: SIGTERM a fifth of this (at most 2 s) before the end, SIGKILL at the end. */
  withinMs: number;
  /** Ctrl-C or SIGTERM of bulkcheck: the command is stopped at once. */
  signal: AbortSignal;
  /** Where its stdout goes (nowhere when absent) and its stderr; never bulkcheck's stdout, which is data. */
  stdout?: Writable | undefined;
  stderr: Writable;
}

/**
 * What of bulkcheck's environment an `--on-done` command gets: all of it (it is the user's
 * own command, and may run bulkcheck, which needs BULKCHECK_API_KEY when the key comes from
 * there), but the secrets a bulkcheck inside it has no use for:
 * - BULKCHECK_WEBHOOK_SECRET, which signs --notify's posts and nothing else;
 * - the password of BULKCHECK_STORE_URL (in its user part or a `…password=` parameter): the
 *   hook gets the URL without it, so a bulkcheck in it uses the same store and finds the
 *   password where libpq looks for one of its own (~/.pgpass, PGPASSWORD); a URL that does
 *   not parse, whose password cannot be told apart, is not passed at all.
 */
export function hookInheritedEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const { BULKCHECK_WEBHOOK_SECRET: _secret, BULKCHECK_STORE_URL: storeUrl, ...rest } = env;
  const store = storeUrl === undefined ? undefined : withoutStorePassword(storeUrl);
  return store === undefined ? rest : { ...rest, BULKCHECK_STORE_URL: store };
}

/** A store URL with its password taken out, or undefined when it does not parse as a URL. */
function withoutStorePassword(location: string): string | undefined {
  if (!URL.canParse(location)) return undefined;
  const url = new URL(location);
  url.password = "";
  for (const name of [...url.searchParams.keys()]) if (/password/i.test(name)) url.searchParams.delete(name);
  return url.href;
}

/** How the command ended. */
export type HookEnd =
  | { type: "exited"; code: number }
  | { type: "killed"; signal: string }
  | { type: "timed-out"; afterMs: number }
  | { type: "stopped" }
  | { type: "not-started"; error: Error };

/**
 * Runs a command once, in a process group of its own (so stopping it stops what it
 * started too), with `input` on its stdin, and returns how it ended: it never throws for
 * what the command does. Stopped with SIGTERM, then SIGKILL, when its time (`withinMs`) runs
 * out or `signal` aborts; whatever happens, it returns within `withinMs`.
 */
export async function runHook(command: HookCommand): Promise<HookEnd> {
  const [program, ...args] = command.argv;
  const child = spawn(program!, args, {
    cwd: command.cwd,
    env: command.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  // A command that does not read its stdin closes it under what is written.
  child.stdin.on("error", () => undefined);
  child.stdout.on("data", (chunk: Buffer) => command.stdout?.write(chunk));
  child.stderr.on("data", (chunk: Buffer) => command.stderr.write(chunk));
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const ended = new Promise<HookEnd>((resolve) => {
    child.once("error", (error) => resolve({ type: "not-started", error }));
    child.once("exit", (code, signal) => resolve(signal ? { type: "killed", signal } : { type: "exited", code: code ?? 0 }));
  });
  const endsAt = Date.now() + command.withinMs;
  const graceMs = Math.min(KILL_GRACE_MS, command.withinMs / 5);
  let stoppedBy: "timed-out" | "stopped" | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: "timed-out" | "stopped") => {
    if (stoppedBy) return;
    stoppedBy = why;
    killGroup(child.pid, "SIGTERM");
    killTimer = setTimeout(() => killGroup(child.pid, "SIGKILL"), graceMs);
  };
  const termAfterMs = command.withinMs - graceMs;
  const timer = setTimeout(() => stop("timed-out"), termAfterMs);
  const onAbort = () => stop("stopped");
  command.signal.addEventListener("abort", onAbort, { once: true });
  if (command.signal.aborted) onAbort();
  child.stdin.end(command.input);
  try {
    const end = await ended;
    if (end.type === "not-started") return end;
    // Its output may still be on its way; a background process it started may hold the pipes open for good.
    const outputGraceMs = Math.max(0, Math.min(OUTPUT_GRACE_MS, endsAt - Date.now()));
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, outputGraceMs).unref())]);
    if (stoppedBy === "timed-out") return { type: stoppedBy, afterMs: termAfterMs };
    return stoppedBy ? { type: stoppedBy } : end;
  } finally {
    clearTimeout(timer);
    clearTimeout(killTimer);
    // What a stopped command started goes with it; what a command that ended by itself left running is its own business.
    if (stoppedBy) killGroup(child.pid, "SIGKILL");
    command.signal.removeEventListener("abort", onAbort);
    child.stdout.destroy();
    child.stderr.destroy();
  }
}

/** Signals the command's whole process group; it may be gone already. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already ended.
  }
}
