// Running bulkcheck for the soak: as a real child process (the flows under chaos)
// or in-process from dist (the fault-free reference runs), with the environment and
// the lists the runs get, plus a small pool.
import { spawn } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/**
 * The faults the soak's sandboxes draw from: every way a request can fail that a client
 * must survive. (42900 comes from the quota of unfinished tasks itself, as a service sends it.)
 */
export const SOAK_FAULTS = ["42901", "50303", "50400", "50300", "drop", "drop-mid-upload", "drop-after-commit", "drop-mid-download"];

export const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));

/**
 * Spawns `node bin/bulkcheck.js ...argv`; `done` resolves with its exit code, output
 * and wall time once it has exited. `env` is the whole environment of the child.
 */
export function startProcess(argv, { env, cwd }) {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...argv], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const done = new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) =>
      resolve({ code: code ?? (signal ? 128 : -1), signal, stdout, stderr, pid: child.pid, wallMs: Date.now() - started }),
    );
  });
  return { child, done };
}

/** Runs `node bin/bulkcheck.js ...argv` to its end (see startProcess). */
export function runProcess(argv, options) {
  return startProcess(argv, options).done;
}

/** A sandbox's state once no task is processing (a run that gave up mid-wait leaves one running), or after 30 s. */
export async function settledState(sandbox) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = sandbox.inspect();
    if (!state.tasks.some((task) => task.status === "processing") || Date.now() > deadline) return state;
    await delay(100);
  }
}

/** Runs bulkcheck in this process (dist/main.js) with captured streams: cheap, for fault-free reference runs. */
export async function runInProcess(argv, { env, cwd }) {
  const { main } = await import("../dist/main.js");
  const collect = () => {
    const stream = new PassThrough();
    let text = "";
    stream.on("data", (chunk) => (text += chunk));
    return { stream, text: () => text };
  };
  const stdout = collect();
  const stderr = collect();
  const code = await main(argv, {
    io: { stdin: Readable.from([]), stdout: stdout.stream, stderr: stderr.stream },
    env,
    now: Date.now,
    sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}),
    random: Math.random,
    signal: new AbortController().signal,
    cwd,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Runs `jobs` (functions returning promises) at most `width` at a time; resolves with their results in order. */
export async function pool(jobs, width) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < jobs.length; index = next++) results[index] = await jobs[index]();
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, jobs.length)) }, worker));
  return results;
}

/** The whole environment of a soak run: a private HOME and config directory, and no terminal. */
export function soakEnv({ baseUrl, apiKey, configDir, home }) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    BULKCHECK_BASE_URL: baseUrl,
    BULKCHECK_API_KEY: apiKey,
    BULKCHECK_CONFIG_DIR: configDir,
    CI: "1",
  };
}

/** `count` distinct GB mobile numbers written as people write them, from the `offset`-th on. */
export function soakNumbers(count, offset) {
  const prefixes = ["7400", "7500", "7800"];
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    return `+44 ${prefixes[n % 3]} ${100_000 + (n % 900_000)}`;
  });
}
