import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDripServer, startStandIn, type DripServer, type StandIn } from "../helpers/fault-fixtures.js";
import { spawnCli, tempDir, type SpawnOptions } from "../helpers/cli.js";
import { API_KEY, assertClean, e2eSandboxes, listText, until } from "../helpers/sandbox.js";

// Issue 18, "Bounds missing": every duration flag bounded in one place (point 6), --timeout
// bounding preparation (7), a dripping result file abandoned without --timeout (8), and
// validate stopping on SIGTERM and Ctrl-C (10).

const sandbox = e2eSandboxes();
const servers: Array<DripServer | StandIn> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const TASK = "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53";

/** A stand-in whose task is always still processing. */
async function processingService(): Promise<StandIn> {
  const task = {
    id: TASK,
    product: "number_validation_batch",
    status: "processing",
    country: "GB",
    total: 600,
    created_at: "2025-01-15T09:00:00.000Z",
  };
  const service = await startStandIn({
    check: { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ code: 0, msg: "success", data: task }) },
  });
  servers.push(service);
  return service;
}

/** Spawns the binary against `baseUrl` with a private config directory; the output is checked when it ends. */
function spawnAgainst(
  baseUrl: string,
  argv: string[],
  options: Omit<SpawnOptions, "env" | "cwd"> & { cwd?: string; env?: Record<string, string> } = {},
) {
  const cwd = options.cwd ?? tempDir();
  const env = { BULKCHECK_BASE_URL: baseUrl, BULKCHECK_API_KEY: API_KEY, BULKCHECK_CONFIG_DIR: join(cwd, "config"), ...options.env };
  const spawned = spawnCli(argv, { ...options, env, cwd });
  const started = Date.now();
  return {
    ...spawned,
    done: spawned.done.then((result) => {
      assertClean(argv, result, { colour: false, env });
      return { ...result, seconds: (Date.now() - started) / 1000 };
    }),
  };
}

/**
 * Ends the child's stdin after `ms`, as `(echo …; sleep 20) |` does: a run that does not
 * stop by itself then ends anyway (and fails its test) instead of hanging the suite.
 */
function producerFinishingAfter(child: { stdin: NodeJS.WritableStream }, ms: number): void {
  setTimeout(() => child.stdin.end(), ms).unref();
}

describe("one place bounds every duration flag (point 6)", () => {
  it("refuses `wait ID --interval 3600000`, milliseconds typed as seconds, before any request, saying it is read as seconds", async () => {
    const service = await processingService();
    // --timeout 5 ends the run that is not refused (it used to poll every 1 ms).
    const out = await spawnAgainst(service.url, ["wait", TASK, "--interval", "3600000", "--timeout", "5"]).done;
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain("error: option '--interval <sec>' argument '3600000' is invalid.");
    expect(out.stderr).toContain("3600000 is read as seconds (41.7 days); the longest is 2147483 seconds (24.8 days).");
    expect(service.requests).toEqual([]);
  });

  it("refuses `--timeout 2592000` (30 days) as too long, exit 2, instead of ending at once with exit 8", async () => {
    const service = await processingService();
    for (const timeout of ["2592000", "30d"]) {
      const out = await spawnAgainst(service.url, ["wait", TASK, "--interval", "0.2", "--timeout", timeout]).done;
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain(timeout === "30d" ? "30d is 30 days;" : "2592000 is read as seconds (30 days);");
      expect(out.stderr).not.toContain("ran out");
    }
    expect(service.requests).toEqual([]);
  });

  it("takes a duration with its unit", async () => {
    const service = await processingService();
    const out = await spawnAgainst(service.url, ["wait", TASK, "--interval", "1s", "--timeout", "0.05m"]).done;
    expect(out.code, out.stderr).toBe(8);
    // 0.05m is 3 s, whichever notices first: the wait's own clock, or the command's deadline.
    expect(out.stderr).toMatch(/Still processing after 3s|The --timeout of 3 s ran out/);
    expect(service.requests.length).toBeGreaterThanOrEqual(1);
  });
});

describe("--timeout bounds the whole command from its first instruction, preparation included (point 7)", () => {
  it("ends `(echo +447400100001; sleep 20) | bulkcheck submit - … --timeout 3` at about 3 s with exit 8, uploading nothing", async () => {
    const e = await sandbox({ fakeClock: false });
    const argv = ["submit", "-", "--type", "number_activity_batch", "--country", "GB", "--yes", "--timeout", "3"];
    const run = spawnAgainst(e.sandbox.url, argv, { stdin: "+447400100001\n", stdinOpen: true, cwd: e.dir });
    producerFinishingAfter(run.child, 20_000);
    const out = await run.done;
    expect(out.code, out.stderr).toBe(8);
    expect(out.stderr).toContain("The --timeout of 3 s ran out");
    expect(out.seconds).toBeLessThan(12);
    expect(e.state().tasks).toEqual([]);
  }, 40_000);
});

describe("the per-request deadlines bound a result transfer without --timeout (point 8)", () => {
  it("abandons a result file sent one byte every 0.5 s, restarts it from a fresh link twice, then exits 7 writing nothing", async () => {
    // Never silent for as long as the body deadline (2 s), so only the minimum rate can end it.
    const drip = await startDripServer({ intervalMs: 500, quickChecks: true });
    servers.push(drip);
    const dir = tempDir();
    const out = await spawnAgainst(drip.url, ["download", TASK, "-o", "d.csv", "--request-timeout", "2"], { cwd: dir }).done;
    expect(out.code, out.stderr).toBe(7);
    expect(out.stderr).toContain("below the minimum of 1 KiB/s");
    expect(out.stderr.match(/starting again with a fresh link/g)).toHaveLength(2);
    expect(out.stderr).toContain("error: The download broke off 3 times");
    expect(drip.requests.filter((line) => line.startsWith("GET /results/"))).toHaveLength(3);
    expect(readdirSync(dir).filter((name) => name !== "config")).toEqual([]);
  }, 60_000);
});

describe("validate stops on SIGTERM and Ctrl-C like every other command (point 10)", () => {
  it.each([
    ["SIGTERM", 143, "a large file"],
    ["SIGTERM", 143, "a stdin that stays open"],
    ["SIGINT", 130, "a stdin that stays open"],
  ] as const)(
    "stops on %s with exit %i while reading %s, leaving no output and no temporary file",
    async (signal, code, source) => {
      const dir = tempDir();
      const tmp = tempDir("bulkcheck-test-tmpdir-");
      const fromStdin = source !== "a large file";
      // 500,000 numbers take seconds to validate: the signal comes long before the end.
      if (!fromStdin) writeFileSync(join(dir, "big.txt"), listText(500_000));
      const argv = ["validate", fromStdin ? "-" : "big.txt", "--country", "GB", "-o", "out.txt", "--rejects", "rejects.csv"];
      const run = spawnCli(argv, { cwd: dir, env: { TMPDIR: tmp }, ...(fromStdin ? { stdin: listText(1000), stdinOpen: true } : {}) });
      producerFinishingAfter(run.child, 15_000);
      // Preparation has started once its private directory exists (the signal handlers are in place long before).
      await until(() => readdirSync(tmp).length > 0);
      run.child.kill(signal);
      const out = await run.done;
      expect(out.code, out.stderr).toBe(code);
      expect(out.stdout).toBe("");
      expect(readdirSync(dir)).toEqual(fromStdin ? [] : ["big.txt"]);
      expect(readdirSync(tmp)).toEqual([]);
    },
    30_000,
  );
});
