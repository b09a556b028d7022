import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { BIN, spawnCli, tempDir } from "../helpers/cli.js";
import { API_KEY, assertClean, e2eSandboxes, lines, listText, submitArgs, until, type E2e } from "../helpers/sandbox.js";

/**
 * The real process (bin/bulkcheck.js → dist, built by `npm run build`): exit
 * codes as the OS sees them, signals, and shell pipelines. Real clock throughout.
 */
const sandbox = e2eSandboxes();
const run = promisify(execFile);

async function finished(e: E2e): Promise<string> {
  const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
  expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
  return id;
}

describe("the bulkcheck process", () => {
  it("exits with the documented codes as the OS sees them", async () => {
    const e = await sandbox({ fakeClock: false, balanceMicros: 100_000 });
    const list = e.file("list.txt", listText(500));
    const [ok, usage, noKey, badKey, balance] = await Promise.all([
      e.bin(["balance", "--json"]),
      e.bin(["submit", list, "--country", "GB"]),
      e.bin(["balance"], { env: { BULKCHECK_API_KEY: undefined } }),
      e.bin(["balance"], { env: { BULKCHECK_API_KEY: "sk_wrong_0000000000000000" } }),
      e.bin(submitArgs(list)),
    ]);
    expect([ok.code, usage.code, noKey.code, badKey.code, balance.code]).toEqual([0, 2, 4, 4, 5]);
    expect(JSON.parse(ok.stdout)).toMatchObject({ balance_micros: 100_000, balance_usd: 0.1 });
    expect(usage.stderr).toContain("required option '--type <service_type>' not specified");
    for (const failed of [usage, noKey, badKey, balance]) expect(failed.stdout).toBe("");
  });

  it("exits 6 for a failed task and 8 on --timeout", async () => {
    const failing = await sandbox({ fakeClock: false, failRate: 1 });
    const slow = await sandbox({ fakeClock: false, numbersPerSecond: 1 });
    const failedId = (await failing.run(submitArgs(failing.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const slowId = (await slow.run(submitArgs(slow.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const [failed, timedOut] = await Promise.all([
      failing.bin(["wait", failedId, "--interval", "0.2"]),
      slow.bin(["wait", slowId, "--interval", "0.2", "--timeout", "1"]),
    ]);
    expect(failed.code).toBe(6);
    expect(timedOut.code).toBe(8);
    expect(timedOut.stderr).toContain(`Resume with: bulkcheck wait ${slowId}`);
  });

  // SIGTERM (issue 14): 143, with the same clean-up as Ctrl-C.
  it.each([
    ["Ctrl-C", "SIGINT", 130],
    ["SIGTERM", "SIGTERM", 143],
  ] as const)("stops waiting on %s with exit %i, prints the resume command, and leaves the task alone", async (_name, signal, code) => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 1 });
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const waiting = e.spawn(["wait", id, "--interval", "0.2"]);
    await until(() => waiting.output().stderr.includes(`task ${id} processing`));
    waiting.child.kill(signal);
    const out = await waiting.done;
    expect(out.code).toBe(code);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("Stopped waiting. The tasks are not affected.");
    expect(out.stderr).toContain(`Resume with: bulkcheck wait ${id}`);
    expect(e.state().tasks[0]).toMatchObject({ id, status: "processing" });
  });

  it("carries on the run of a submit killed after the service committed its task: the same task, reserved once", async () => {
    const e = await sandbox({ fakeClock: false });
    const list = e.file("list.txt", listText(500));
    // The first attempt commits the task but its answer is lost; the retry is held until the process is killed.
    e.sandbox.scriptFaults([
      { route: "submit", fault: "drop-after-commit" },
      { route: "submit", fault: "slow", delayMs: 30_000 },
    ]);
    const submit = e.spawn(submitArgs(list));
    await until(() => e.state().scripted_faults_pending === 0);
    submit.child.kill("SIGKILL");
    const killed = await submit.done;
    expect(killed.stdout).toBe("");
    const [task] = e.state().tasks;
    expect(task).toBeDefined();

    const rerun = await e.bin(submitArgs(list));
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toBe(`${task!.id}\n`);
    expect(rerun.stderr).toContain("Carrying on run");
    expect(rerun.stderr).toContain(`Task ${task!.id} had already been created for this run by an earlier attempt`);
    expect(e.state().tasks).toHaveLength(1);
    expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
  });

  it("leaves no destination file when killed mid-download, and the next run cleans up and completes", async () => {
    const e = await sandbox({ fakeClock: false });
    const id = await finished(e);
    e.sandbox.scriptFaults([{ route: "result", fault: "slow", delayMs: 30_000 }]);
    const download = e.spawn(["download", id, "-o", "results.csv"]);
    await until(() => e.state().scripted_faults_pending === 0);
    download.child.kill("SIGKILL");
    await download.done;
    expect(existsSync(join(e.dir, "results.csv"))).toBe(false);
    // What the killed run left is a temp file recognisably its own, which the next run removes.
    expect(readdirSync(e.dir).filter((name) => name.startsWith(".results.csv.bulkcheck-"))).toHaveLength(1);

    const again = await e.bin(["download", id, "-o", "results.csv"]);
    expect(again.code).toBe(0);
    expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(501);
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("works in a shell: ID=$(bulkcheck submit ...), then wait and download by that id", async () => {
    const e = await sandbox({ fakeClock: false });
    e.file("list.txt", listText(500));
    const script = [
      "set -e",
      `ID=$("$NODE" "$BIN" submit list.txt --type number_validation_batch --country GB --yes)`,
      `"$NODE" "$BIN" wait "$ID" --interval 0.2 --quiet`,
      `"$NODE" "$BIN" download "$ID" -o out.csv --quiet`,
      `echo "id=$ID"`,
    ].join("\n");
    const out = await shell(e, script);
    expect(out.stdout).toMatch(/^[0-9a-f]{32}\tsuccess\nid=[0-9a-f]{32}\n$/);
    const id = /id=([0-9a-f]{32})/.exec(out.stdout)![1];
    expect(e.state().tasks.map((task) => task.id)).toEqual([id]);
    expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(501);
  });

  it("pipes a list into submit - and the ids into wait - and download -", async () => {
    const e = await sandbox({ fakeClock: false });
    e.file("list.txt", listText(500));
    const script = [
      "set -e",
      `"$NODE" "$BIN" submit - --type number_validation_batch --country GB --yes --quiet < list.txt > ids.txt`,
      `"$NODE" "$BIN" wait - --interval 0.2 --quiet < ids.txt`,
      `"$NODE" "$BIN" download - --format jsonl < ids.txt | head -n 3`,
    ].join("\n");
    const out = await shell(e, script);
    const [waited, ...rows] = lines(out.stdout);
    expect(waited).toMatch(/^[0-9a-f]{32}\tsuccess$/);
    expect(rows).toHaveLength(3);
    for (const row of rows)
      expect(JSON.parse(row)).toEqual({ identifier: expect.stringMatching(/^44\d{10}$/), activated: expect.any(Boolean) });
    expect(readFileSync(join(e.dir, "ids.txt"), "utf8")).toMatch(/^[0-9a-f]{32}\n$/);
  });

  it("stops quietly with exit 0 when the reader of stdout goes away (| head)", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 50_000 });
    const id = (await e.run(submitArgs(e.file("list.txt", listText(6000)), "--quiet"))).stdout.trim();
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    const out = await run("bash", ["-c", `"$NODE" "$BIN" download ${id} --format jsonl | head -n 2; echo "status=\${PIPESTATUS[0]}"`], {
      cwd: e.dir,
      env: { PATH: process.env.PATH, HOME: e.dir, ...e.env, NODE: process.execPath, BIN },
    });
    assertClean([], { code: 0, ...out }, { colour: false, env: e.env });
    expect(lines(out.stdout)).toHaveLength(3);
    expect(out.stdout).toMatch(/status=0\n$/);
    expect(out.stderr).not.toContain("error");
  });

  it("runs the sandbox command until Ctrl-C and serves the CLI, logging requests to --log FILE", async () => {
    const log = join(tempDir(), "requests.log");
    const server = spawnCli(["sandbox", "--json", "--port", "0", "--seed", "7", "--balance-micros", "3000000", "--log", log]);
    await until(() => server.output().stdout.includes("\n"));
    const { base_url: url, api_key: key } = JSON.parse(lines(server.output().stdout)[0]!) as { base_url: string; api_key: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const balance = await spawnCli(["balance"], {
      env: { BULKCHECK_BASE_URL: url, BULKCHECK_API_KEY: key, BULKCHECK_CONFIG_DIR: tempDir() },
    }).done;
    expect(balance).toMatchObject({ code: 0, stdout: "$3.00 (3000000 micros)\n" });
    expect(balance.stdout + balance.stderr).not.toContain(key);
    server.child.kill("SIGINT");
    const stopped = await server.done;
    expect(stopped.code).toBe(0);
    // stderr is no terminal here: the request lines go only to the --log file.
    expect(stopped.stderr).not.toMatch(/GET \/api\/v1\/balance/);
    expect(readFileSync(log, "utf8")).toMatch(/^GET \/api\/v1\/balance code=0 \d+ms$/m);
    expect(readFileSync(log, "utf8") + stopped.stderr).not.toContain(key);
  });
});

/** Runs a POSIX shell script in the sandbox's work dir with $NODE and $BIN set; checks its output is clean. */
async function shell(e: E2e, script: string): Promise<{ stdout: string; stderr: string }> {
  const out = await run("sh", ["-c", script], {
    cwd: e.dir,
    env: { PATH: process.env.PATH, HOME: e.dir, ...e.env, NODE: process.execPath, BIN },
  });
  assertClean([], { code: 0, ...out }, { colour: false, env: e.env });
  expect(out.stdout.includes(API_KEY)).toBe(false);
  return out;
}
