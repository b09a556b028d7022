import { createHash } from "node:crypto";
import { copyFileSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { describe, expect, it } from "vitest";
import { spawnCli, tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { e2eSandboxes, lines, listText, submitArgs, type E2e } from "../helpers/sandbox.js";

/**
 * The store holds every open run's keys and every result: nothing writes over it, a
 * damaged or newer one is refused with what to do, and it can be checked and backed up
 * (issue 28, points 1 to 3).
 */
const sandbox = e2eSandboxes();

/** A sandbox whose store holds one finished run of 500 numbers; the task's id. */
async function storeWithRun(): Promise<{ e: E2e; id: string; store: string }> {
  const e = await sandbox();
  const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "--quiet", "-o", "results.csv"));
  expect(out.code, out.stderr).toBe(0);
  return { e, id: lines(out.stdout)[0]!, store: join(e.configDir, "bulkcheck.db") };
}

/** Runs `sql` on the SQLite file outside bulkcheck (as another program would), then moves the write-ahead log into the file. */
function sqlite(path: string, sql: string): void {
  const db = new Database(path);
  db.exec(sql);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** What the store holds, as a user sees it: the ledger's statistics (but where it is and its size on disk) and every result exported. */
async function holdings(e: E2e, env: Record<string, string> = {}): Promise<{ stats: unknown; results: string }> {
  const [stats, results] = await Promise.all([
    e.bin(["ledger", "stats", "--json"], { env }),
    e.bin(["ledger", "export", "--format", "jsonl"], { env }),
  ]);
  expect(stats.code, stats.stderr).toBe(0);
  expect(results.code, results.stderr).toBe(0);
  const { location: _location, bytes: _bytes, ...held } = JSON.parse(stats.stdout) as Record<string, unknown>;
  return { stats: held, results: results.stdout };
}

describe("the store is never an output (point 1)", () => {
  it("refuses the store, links to it, its write-ahead log and the staging directory as every command's output: exit 2, no request, the store intact", async () => {
    const { e, id, store } = await storeWithRun();
    const before = await holdings(e);
    sqlite(store, "SELECT 1");
    const bytes = sha256(store);
    symlinkSync(store, join(e.dir, "link.db"));
    linkSync(store, join(e.dir, "hard.db"));
    const staging = join(e.configDir, "staging");
    mkdirSync(staging, { recursive: true });
    const list = e.file("other.txt", listText(500, 5000));
    const requests = e.state().stats.requests;
    const attempts: Array<[string[], string]> = [
      [["ledger", "export", "-o", store, "--force"], `${store} is part of bulkcheck's store; bulkcheck never writes over its input.`],
      [["ledger", "export", "-o", "link.db", "--force"], `link.db is part of bulkcheck's store (${store})`],
      [["ledger", "export", "-o", "hard.db", "--force"], `hard.db is part of bulkcheck's store (${store})`],
      [["download", id, "-o", `${store}-wal`, "--force"], `${store}-wal is part of bulkcheck's store`],
      [submitArgs(list, "--wait", "-o", store, "--force"), `${store} is part of bulkcheck's store`],
      [submitArgs(list, "--wait", "--report", "hard.db", "--force"), "hard.db is part of bulkcheck's store"],
      [submitArgs(list, "--wait", "--changes", "link.db", "--force"), "link.db is part of bulkcheck's store"],
      [
        ["validate", list, "--country", "GB", "--rejects", join(staging, "rejects.csv")],
        `is in bulkcheck's staging directory (${staging})`,
      ],
      [["store", "backup", "link.db", "--force"], "link.db is part of bulkcheck's store"],
    ];
    const outcomes = await Promise.all(attempts.map(([argv]) => e.bin(argv)));
    for (const [index, out] of outcomes.entries()) {
      expect(out.code, attempts[index]![0].join(" ")).toBe(2);
      expect(out.stderr).toContain(attempts[index]![1]);
    }
    expect(e.state().stats.requests).toBe(requests);
    expect(sha256(store)).toBe(bytes);
    expect(await holdings(e)).toEqual(before);
  });

  it("refuses the store as the sandbox's request log, which is appended to", async () => {
    const e = await sandbox();
    expect((await e.bin(["store", "init"])).code).toBe(0);
    const store = join(e.configDir, "bulkcheck.db");
    const served = spawnCli(["sandbox", "--port", "0", "--log", store], { env: e.env });
    // Not refused, it would serve until stopped.
    const stop = setTimeout(() => served.child.kill(), 20_000);
    const out = await served.done;
    clearTimeout(stop);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`${store} is part of bulkcheck's store`);
    expect((await e.bin(["store", "check"])).stdout).toBe("ok\n");
  });
});

describe("the config file and bulkcheck's directories are never an output (issue 35, point 1)", () => {
  it("refuses the config file, links to it and any file in the config directory as every command's output: exit 2, the profiles intact", async () => {
    const { e, id } = await storeWithRun();
    const set = await e.run(["config", "set", "max-task-size", "100000"]);
    expect(set.code, set.stderr).toBe(0);
    const config = join(e.configDir, "config.json");
    const bytes = sha256(config);
    symlinkSync(config, join(e.dir, "link.json"));
    linkSync(config, join(e.dir, "hard.json"));
    const list = e.file("other.txt", listText(500, 5000));
    const inConfigDir = `is in bulkcheck's config directory (${e.configDir}); bulkcheck keeps its own files there`;
    const isConfig = "is bulkcheck's config file";
    const attempts: Array<[string[], string]> = [
      [["store", "backup", config, "--force"], `${config} ${isConfig}; it holds every profile's settings, API key and webhook secret`],
      [["ledger", "export", "-o", config, "--force"], `${config} ${isConfig}`],
      [["ledger", "export", "-o", "link.json", "--force"], `link.json ${isConfig} (${config})`],
      [["download", id, "-o", "hard.json", "--force"], `hard.json ${isConfig} (${config})`],
      [["report", id, "-o", config, "--force"], `${config} ${isConfig}`],
      [submitArgs(list, "--wait", "-o", config, "--force"), `${config} ${isConfig}`],
      [submitArgs(list, "--wait", "--changes", "link.json", "--force"), `link.json ${isConfig}`],
      [["validate", list, "--country", "GB", "--rejects", join(e.configDir, "rejects.csv")], `rejects.csv ${inConfigDir}`],
      [["validate", list, "--country", "GB", "-o", join(e.configDir, "journal.jsonl")], `journal.jsonl ${inConfigDir}`],
    ];
    const requests = e.state().stats.requests;
    const outcomes = await Promise.all(attempts.map(([argv]) => e.bin(argv)));
    for (const [index, out] of outcomes.entries()) {
      expect(out.code, attempts[index]![0].join(" ")).toBe(2);
      expect(out.stderr).toContain(attempts[index]![1]);
    }
    expect(outcomes[7]!.stderr).toContain(`Give the output a path outside ${e.configDir}.`);
    expect(e.state().stats.requests).toBe(requests);
    expect(sha256(config)).toBe(bytes);
    expect((await e.run(["config", "get", "max-task-size"])).stdout).toBe("100000\n");
  });

  it("refuses any file in the state directory when it is a directory of its own, and the sandbox's --log there", async () => {
    const e = await sandbox();
    const home = tempDir("bulkcheck-xdg-");
    const env = { BULKCHECK_CONFIG_DIR: undefined, XDG_CONFIG_HOME: join(home, "config"), XDG_STATE_HOME: join(home, "state") };
    expect((await e.bin(["store", "init"], { env })).code).toBe(0);
    const state = join(home, "state", "bulkcheck");
    const exported = await e.bin(["ledger", "export", "-o", join(state, "export.csv")], { env });
    expect(exported.code).toBe(2);
    expect(exported.stderr).toContain(`export.csv is in bulkcheck's state directory (${state})`);
    const served = spawnCli(["sandbox", "--port", "0", "--log", join(state, "requests.log")], { env: { ...e.env, ...env } });
    const stop = setTimeout(() => served.child.kill(), 20_000);
    const out = await served.done;
    clearTimeout(stop);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`requests.log is in bulkcheck's state directory (${state})`);
  });
});

describe("a damaged store (point 2)", () => {
  it("is found by store check, and every command names it with exit 3 and what to do, never as a bug", async () => {
    const { e, store } = await storeWithRun();
    const sound = await e.bin(["store", "check"]);
    expect(sound.code, sound.stderr).toBe(0);
    expect(sound.stdout).toBe("ok\n");
    sqlite(store, "SELECT 1");
    truncateSync(store, Math.floor(statSync(store).size / 2));
    const [exported, checked] = await Promise.all([e.bin(["ledger", "export"]), e.bin(["store", "check", "--json"])]);
    expect(exported.code).toBe(3);
    expect(exported.stderr).toContain(`error: The store ${store} is damaged: database disk image is malformed.`);
    expect(exported.stderr).toContain("bulkcheck store check");
    expect(exported.stderr).not.toContain("bulkcheck bug");
    expect(checked.code).toBe(3);
    const report = JSON.parse(checked.stdout) as { ok: boolean; problems: string[]; location: string };
    expect(report).toMatchObject({ ok: false, location: store });
    expect(report.problems.length).toBeGreaterThan(0);

    writeFileSync(store, "phone,carrier\n+447400100001,Vodafone\n");
    const runs = await e.bin(["runs"]);
    expect(runs.code).toBe(3);
    expect(runs.stderr).toContain(`error: The store ${store} is damaged: file is not a database.`);
    const check = await e.bin(["store", "check"]);
    expect(check.code).toBe(3);
    expect(check.stdout).toBe("file is not a database\n");
  });
});

describe("store backup (point 2)", () => {
  it("copies the store while another connection holds its write lock, and the copy opened as a store holds the same runs and results", async () => {
    const { e, store } = await storeWithRun();
    const writer = new Database(store);
    writer.exec("BEGIN IMMEDIATE");
    writer.exec("INSERT INTO meta (key, value) VALUES ('uncommitted', 'never in the copy')");
    let backup;
    try {
      backup = await e.bin(["store", "backup", "backup.db", "--json"]);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
    expect(backup.code, backup.stderr).toBe(0);
    const copy = join(e.dir, "backup.db");
    expect(JSON.parse(backup.stdout)).toEqual({ from: store, to: copy, bytes: statSync(copy).size });
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    expect(readFileSync(copy).includes("never in the copy")).toBe(false);

    const restored = tempDir("bulkcheck-restored-");
    copyFileSync(copy, join(restored, "bulkcheck.db"));
    const env = { BULKCHECK_CONFIG_DIR: restored };
    expect(await holdings(e, env)).toEqual(await holdings(e));
    const [runs, restoredRuns, check] = await Promise.all([
      e.bin(["runs", "--json"]),
      e.bin(["runs", "--json"], { env }),
      e.bin(["store", "check"], { env }),
    ]);
    expect(restoredRuns.stdout).toBe(runs.stdout);
    expect(check.stdout).toBe("ok\n");

    // A run after the backup is unknown to the restored store: its tasks are waited for and downloaded by id, into its ledger.
    const later = await e.run(submitArgs(e.file("later.txt", listText(500, 5000)), "--quiet"));
    expect(later.code, later.stderr).toBe(0);
    const ids = lines(later.stdout);
    expect((await e.run(["wait", ...ids], { env })).code).toBe(0);
    const downloaded = await e.run(["download", ...ids, "-o", "later.csv"], { env });
    expect(downloaded.code, downloaded.stderr).toBe(0);
    const stats = await e.run(["ledger", "stats", "--json"], { env });
    expect(JSON.parse(stats.stdout)).toMatchObject({ results: 1000 });
  });

  it("says to use pg_dump for a team's PostgreSQL, with exit 2", async () => {
    const e = await sandbox();
    const out = await e.run(["store", "backup", "backup.db"], { env: { BULKCHECK_STORE_URL: await createTestDatabase() } });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("pg_dump --schema=bulkcheck");
  });
});

describe("a store of a newer schema (point 3)", () => {
  it("is refused before any request, as the PostgreSQL store is", async () => {
    const e = await sandbox();
    expect((await e.bin(["store", "init"])).code).toBe(0);
    const store = join(e.configDir, "bulkcheck.db");
    sqlite(store, "PRAGMA user_version = 99");
    const list = e.file("list.txt", listText(500));
    const [submitted, stats] = await Promise.all([e.bin(submitArgs(list, "--wait")), e.bin(["ledger", "stats"])]);
    for (const out of [submitted, stats]) {
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(
        new RegExp(`error: The store at ${store} has schema version 99, newer than this bulkcheck knows \\(\\d+\\)\\.`),
      );
    }
    expect(e.state().stats.requests).toBe(0);
  });
});
