// Running bulkcheck for the soak: as a real child process (the flows under chaos)
// or in-process from dist (the fault-free reference runs), plus a small pool.
import { spawn } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));

/**
 * Spawns `node bin/bulkcheck.js ...argv` and resolves with its exit code and
 * output once it has exited. `env` is the whole environment of the child.
 */
export function runProcess(argv, { env, cwd }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), signal, stdout, stderr, pid: child.pid }));
  });
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
