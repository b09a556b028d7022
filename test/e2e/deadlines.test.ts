import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../api/scripted-server.js";
import { startDripServer, type DripServer } from "../helpers/fault-fixtures.js";
import { spawnCli, tempDir } from "../helpers/cli.js";
import { API_KEY, assertClean, e2eSandboxes, listText, submitArgs, until } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();
const drips: DripServer[] = [];
afterEach(async () => {
  await Promise.all(drips.splice(0).map((server) => server.close()));
});

const TASK = "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53";

/** A server that answers with headers at once, then one byte every 200 ms: far inside any body timeout between chunks. */
async function dripping(options: { quickChecks?: boolean } = {}): Promise<DripServer> {
  const server = await startDripServer({ intervalMs: 200, ...options });
  drips.push(server);
  return server;
}

/** Spawns the binary against `baseUrl` with a private config directory. */
function spawnAgainst(baseUrl: string, argv: string[], cwd = tempDir()) {
  const env = { BULKCHECK_BASE_URL: baseUrl, BULKCHECK_API_KEY: API_KEY, BULKCHECK_CONFIG_DIR: join(cwd, "config") };
  const spawned = spawnCli(argv, { env, cwd });
  return {
    ...spawned,
    done: spawned.done.then((result) => {
      assertClean(argv, result, { colour: false, env });
      return result;
    }),
  };
}

describe("--timeout bounds the whole command (issue 12, problem 4)", () => {
  it("ends status, balance, wait, retry-failed, download, report and submit --wait with exit 8 against a server that drips its answers", async () => {
    const slow = await dripping();
    const slowResults = await dripping({ quickChecks: true });
    const dir = tempDir();
    const list = join(dir, "list.txt");
    writeFileSync(list, listText(500));
    const runs = {
      status: spawnAgainst(slow.url, ["status", TASK, "--timeout", "4"]),
      balance: spawnAgainst(slow.url, ["balance", "--timeout", "4"]),
      wait: spawnAgainst(slow.url, ["wait", TASK, "--interval", "0.2", "--timeout", "4"]),
      retry: spawnAgainst(slow.url, ["retry-failed", TASK, "--yes", "--timeout", "4"]),
      download: spawnAgainst(slowResults.url, ["download", TASK, "-o", "out.csv", "--timeout", "4"], dir),
      report: spawnAgainst(slowResults.url, ["report", TASK, "-o", "report.html", "--timeout", "4"], dir),
      submit: spawnAgainst(slow.url, submitArgs(list, "--yes", "--wait", "--timeout", "4"), dir),
    };
    const results = Object.fromEntries(await Promise.all(Object.entries(runs).map(async ([name, run]) => [name, await run.done] as const)));
    for (const [name, result] of Object.entries(results)) {
      expect(result.code, `${name}: ${result.stderr}`).toBe(8);
      // Requests are said to be stopped when one was in flight (a retry's wait between two is none).
      expect(result.stderr, name).toMatch(/error: The --timeout of 4 s ran out(; requests in flight were stopped)?\./);
    }
    // A status check or a balance whose answer drips is in flight when the time runs out.
    for (const name of ["status", "balance"])
      expect(results[name]!.stderr).toContain("The --timeout of 4 s ran out; requests in flight were stopped.");
    expect(results.status!.stderr).toContain(`Try again, with a longer --timeout: bulkcheck status ${TASK} --timeout 4`);
    expect(results.wait!.stderr).toContain(`Resume with: bulkcheck wait ${TASK}`);
    expect(results.download!.stderr).toContain(`Resume with: bulkcheck download ${TASK} -o out.csv --timeout 4`);
    expect(results.submit!.stderr).toContain(`Resume with: bulkcheck submit ${list}`);
    expect(existsSync(join(dir, "out.csv"))).toBe(false);
    expect(existsSync(join(dir, "report.html"))).toBe(false);
    expect(slowResults.requests.some((request) => request.startsWith("GET /results/"))).toBe(true);
  }, 60_000);

  it("keeps Ctrl-C (exit 130) apart from a timeout (exit 8)", async () => {
    const slow = await dripping();
    const run = spawnAgainst(slow.url, ["status", TASK, "--timeout", "600"]);
    await until(() => slow.requests.length > 0);
    run.child.kill("SIGINT");
    const out = await run.done;
    expect(out.code).toBe(130);
    expect(out.stderr).not.toContain("--timeout");
  }, 30_000);
});

describe("saying what is happening (issue 12, problem 9)", () => {
  it("puts every retry wait on stderr as one line without --verbose, and nothing with --quiet", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    e.sandbox.scriptFaults([
      { route: "submit", fault: "50303", retryAfter: "5" },
      { route: "submit", fault: "drop" },
    ]);
    const out = await e.run(submitArgs(list, "--yes"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("service at capacity (50303), retrying in 5 s as asked");
    expect(out.stderr).toMatch(/^connection lost \([A-Z_]+\), retry 3\/8 in \d s$/m);

    e.sandbox.scriptFaults([{ route: "balance", fault: "42901", retryAfter: "2" }]);
    const quiet = await e.run(["balance", "--quiet"]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe("");
    expect(e.state().stats.faults_injected["42901"]).toBe(1);
  });

  it("fails at once, with the command that starts the sandbox, when nothing listens on a loopback base URL", async () => {
    const port = await freePort();
    const dir = tempDir();
    const out = await spawnAgainst(`http://127.0.0.1:${port}`, ["balance"], dir).done;
    expect(out.code).toBe(7);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`Nothing is listening at http://127.0.0.1:${port} (ECONNREFUSED).`);
    expect(out.stderr).toContain(`bulkcheck sandbox --port ${port}`);
    expect(out.stderr).not.toContain("retry");
  });
});
