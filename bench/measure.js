// Shared by the benchmarks: run a command as a child process and measure its wall
// time and peak RSS (GNU time's %M when /usr/bin/time exists, else /proc VmHWM polling).
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const GNU_TIME = "/usr/bin/time";

/** Runs `command args` and resolves with {code, wallMs, peakRssMb, stdout, stderr}. */
export function measure(command, args, { env = process.env, stdin } = {}) {
  const timeFile = join(tmpdir(), `bulkcheck-bench-${process.pid}-${Math.random().toString(16).slice(2)}.time`);
  const useTime = existsSync(GNU_TIME);
  const [cmd, argv] = useTime ? [GNU_TIME, ["-f", "%M", "-o", timeFile, command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, argv, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let peakKb = 0;
    const poll = useTime
      ? undefined
      : setInterval(() => {
          try {
            const match = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
            if (match) peakKb = Math.max(peakKb, Number(match[1]));
          } catch {
            // the process has just exited: its last reading stands
          }
        }, 20);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.stdin.end(stdin ?? "");
    child.once("error", reject);
    child.once("close", (code) => {
      const wallMs = performance.now() - started;
      if (poll) clearInterval(poll);
      if (useTime && existsSync(timeFile)) {
        peakKb = Number(readFileSync(timeFile, "utf8").trim().split("\n").pop());
        rmSync(timeFile, { force: true });
      }
      resolve({ code, wallMs, peakRssMb: Math.round(peakKb / 1024), stdout, stderr });
    });
  });
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Runs `once` `times` times and returns the run with the median wall time. */
export async function medianRun(times, once) {
  const runs = [];
  for (let i = 0; i < times; i++) runs.push(await once(i));
  const wall = median(runs.map((run) => run.wallMs));
  return runs.find((run) => run.wallMs === wall);
}
