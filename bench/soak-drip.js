// A dripping server: every answer starts at once with its headers, then its body comes
// one byte every 2 s, forever, so that no silence is long enough to trip a timeout
// between chunks. Every command that talks to the service, run against it with
// --timeout, must still end within its --timeout + 5 s (issue 12, problem 4: they used
// to run until killed).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alignedRows, endOf, histogram } from "./soak-checks.js";
import { pool, soakEnv, soakNumbers, startProcess } from "./soak-process.js";

const API_KEY = "sk_soak_dr1p_0123456789abcdef0123";
const TASK = "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53";
/** How long past its --timeout a run is left before the soak kills it (and counts it as hung). */
const WATCHDOG_SECONDS = 60;
/** Exit codes a run cut short by --timeout may end with: 8 (timed out), or 7 (the service stayed unusable). */
const EXPECTED_CODES = new Set([7, 8]);

/** The commands of the contract that talk to the service, as the drip runs use them. */
function commands(list, index) {
  return [
    ["status", TASK],
    ["wait", TASK, "--interval", "1"],
    ["download", TASK, "-o", `out-${index}.csv`],
    ["balance"],
    ["submit", list, "--type", "number_validation_batch", "--country", "GB", "--yes", "--wait", "-o", `submitted-${index}.csv`],
    ["retry-failed", TASK, "--yes"],
  ];
}

/** Starts the dripping server on 127.0.0.1; `requests` counts what it was asked. */
export async function startDripServer({ intervalMs }) {
  const timers = new Set();
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    const result = (req.url ?? "").startsWith("/results/");
    res.writeHead(200, { "content-type": result ? "text/csv" : "application/json" });
    const text = result ? "identifier,activated\n" : '{"code":0,"msg":"success","data":{"id":"';
    let sent = 0;
    const timer = setInterval(() => res.write(sent < text.length ? text[sent++] : "7"), intervalMs);
    timers.add(timer);
    res.once("close", () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearInterval(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Runs `runs` commands (cycling through status, wait, download, balance, submit --wait
 * and retry-failed) against a dripping server, each with --timeout, and returns
 * `{ ok, failures, figures }`. Options: runs (24), parallel (6), timeout (3 s),
 * intervalMs (2000 between bytes), log.
 */
export async function runDripSoak(options = {}) {
  const o = { runs: 24, parallel: 6, timeout: 3, intervalMs: 2000, log: () => undefined, ...options };
  const server = await startDripServer(o);
  const work = mkdtempSync(join(tmpdir(), "bulkcheck-soak-drip-"));
  try {
    const list = join(work, "list.txt");
    writeFileSync(list, soakNumbers(500, 0).join("\n") + "\n");
    o.log(`soak (dripping server): ${o.runs} runs with --timeout ${o.timeout}, one byte every ${o.intervalMs} ms, ${o.parallel} at a time`);
    const runs = await pool(
      Array.from({ length: o.runs }, (_, index) => async () => {
        const argv = [...commands(list, index)[index % 6], "--timeout", String(o.timeout)];
        const dir = join(work, `run-${index}`);
        mkdirSync(dir);
        const env = soakEnv({ baseUrl: server.url, apiKey: API_KEY, configDir: join(dir, "config"), home: dir });
        const run = startProcess(argv, { env, cwd: dir });
        // A run that hangs is the failure this scenario looks for; it must not hang the soak too.
        const watchdog = setTimeout(() => run.child.kill("SIGKILL"), (o.timeout + WATCHDOG_SECONDS) * 1000);
        const result = await run.done;
        clearTimeout(watchdog);
        return { command: argv[0], ...result };
      }),
      o.parallel,
    );
    const checked = checkDripRuns(runs, o.timeout);
    return { ...checked, figures: { ...checked.figures, drip_interval_ms: o.intervalMs, requests: server.requests() } };
  } finally {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Every run ended within --timeout + 5 s, with exit 8 (or 7), without printing the key. */
export function checkDripRuns(runs, timeoutSeconds) {
  const failures = [];
  const byCommand = {};
  let over = 0;
  for (const [index, run] of runs.entries()) {
    const seconds = run.wallMs / 1000;
    const entry = (byCommand[run.command] ??= { runs: 0, longest_s: 0, exit_codes: {} });
    entry.runs++;
    entry.longest_s = Math.max(entry.longest_s, Math.round(seconds * 10) / 10);
    entry.exit_codes[run.code] = (entry.exit_codes[run.code] ?? 0) + 1;
    if (seconds > timeoutSeconds + 5) {
      over++;
      const how = run.signal === "SIGKILL" ? `was still running after ${seconds.toFixed(0)} s (killed)` : `took ${seconds.toFixed(1)} s`;
      failures.push(`run ${index + 1} (${run.command}) ${how} with --timeout ${timeoutSeconds}`);
      continue;
    }
    if (!EXPECTED_CODES.has(run.code)) failures.push(`run ${index + 1} (${run.command}) exited ${run.code}: ${endOf(run.stderr)}`);
    if ((run.stdout + run.stderr).includes(API_KEY)) failures.push(`run ${index + 1} (${run.command}) printed the API key`);
  }
  const longest = Math.max(0, ...Object.values(byCommand).map((entry) => entry.longest_s));
  return {
    ok: failures.length === 0,
    failures,
    figures: {
      runs: runs.length,
      timeout_s: timeoutSeconds,
      runs_past_bound: over,
      longest_run_s: longest,
      max_overrun_s: Math.max(0, Math.round((longest - timeoutSeconds) * 10) / 10),
      by_command: byCommand,
    },
  };
}

/** The figures as aligned lines for a terminal. */
export function formatDripFigures(f) {
  return alignedRows([
    ["runs", `${f.runs} against a server sending one byte every ${f.drip_interval_ms / 1000} s, each with --timeout ${f.timeout_s}`],
    ["ended past --timeout + 5 s", `${f.runs_past_bound} (must be 0)`],
    ["longest run", `${f.longest_run_s} s (at most ${f.max_overrun_s} s past --timeout)`],
    ...Object.entries(f.by_command).map(([command, entry]) => [
      `  ${command}`,
      `${entry.runs} runs, longest ${entry.longest_s} s, exit ${histogram(entry.exit_codes)}`,
    ]),
  ]);
}
