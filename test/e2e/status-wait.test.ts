import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2eSandboxes, lines, listText, submitArgs, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();

async function submitted(e: E2e, count = 500, offset = 0): Promise<string> {
  const out = await e.run(submitArgs(e.file(`list-${offset}.txt`, listText(count, offset)), "--quiet"));
  expect(out.code).toBe(0);
  return out.stdout.trim();
}

describe("bulkcheck status", () => {
  it("prints tab-separated rows with a header when piped", async () => {
    const e = await sandbox();
    const id = await submitted(e);
    const checks = e.state().stats.by_route.check ?? 0;
    const out = await e.run(["status", id]);
    expect(out.code).toBe(0);
    expect(e.state().stats.by_route.check).toBe(checks + 1);
    expect(lines(out.stdout)).toEqual([
      "ID\tPRODUCT\tCOUNTRY\tSTATUS\tTOTAL\tCHECKED\tNO RESULT\tCREATED",
      `${id}\tnumber_validation_batch\tGB\tprocessing (preparing)\t500\t\t\t2025-01-15T09:00:00.000Z`,
    ]);
    expect(out.stderr).toBe("");
  });

  it("prints one JSON object per task with --json, without the bearer result_url", async () => {
    const e = await sandbox();
    const id = await submitted(e);
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    const out = await e.run(["status", id, "--json"]);
    expect(out.code).toBe(0);
    const rows = lines(out.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows).toEqual([expect.objectContaining({ id, status: "success", success_cnt: 500, failure_cnt: 0, result_ready: true })]);
    expect(rows[0]).not.toHaveProperty("result_url");
    expect(out.stderr).toBe("");
  });

  it("draws a boxed table on a terminal", async () => {
    const e = await sandbox();
    const id = await submitted(e);
    const out = await e.run(["status", id], { tty: true });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("┌");
    expect(out.stdout).toMatch(new RegExp(`│ ${id} +│ number_validation_batch`));
    expect(out.stdout).not.toContain("\t");
  });

  it("shows the tasks from the local store, newest first, when no id is given", async () => {
    const e = await sandbox();
    const first = await submitted(e, 500, 0);
    const second = await submitted(e, 500, 1000);
    const out = await e.run(["status"]);
    expect(out.code).toBe(0);
    expect(
      lines(out.stdout)
        .slice(1)
        .map((row) => row.split("\t")[0]),
    ).toEqual([second, first]);
    const limited = await e.run(["status", "--limit", "1", "--json"]);
    expect(lines(limited.stdout).map((line) => (JSON.parse(line) as { id: string }).id)).toEqual([second]);
  });

  it("shows only the current profile's tasks when no id is given", async () => {
    const e = await sandbox();
    const other = await sandbox();
    const mine = await submitted(e);
    // The same config dir (one journal) used with another profile, pointed at another service.
    const elsewhere = await e.run(submitArgs(e.file("other.txt", listText(500, 7000)), "--profile", "other", "--quiet"), {
      env: { BULKCHECK_BASE_URL: other.sandbox.url },
    });
    expect(elsewhere.code).toBe(0);
    const out = await e.run(["status"]);
    expect(out.code).toBe(0);
    expect(
      lines(out.stdout)
        .slice(1)
        .map((row) => row.split("\t")[0]),
    ).toEqual([mine]);
    const otherOut = await e.run(["status", "--profile", "other"], { env: { BULKCHECK_BASE_URL: other.sandbox.url } });
    expect(otherOut.code).toBe(0);
    expect(
      lines(otherOut.stdout)
        .slice(1)
        .map((row) => row.split("\t")[0]),
    ).toEqual([elsewhere.stdout.trim()]);
  });

  it("lists a journalled task the service does not know as not found, and exits 0 (issue 12, problem 8)", async () => {
    // The README's sandbox recipe: a task submitted to a sandbox that was then restarted on the same port.
    const first = await sandbox();
    const forgotten = await submitted(first);
    await first.sandbox.close();
    const restarted = await sandbox({ port: Number(new URL(first.sandbox.url).port) });
    const sameJournal = { env: { BULKCHECK_CONFIG_DIR: first.configDir } };
    const known = (await restarted.run(submitArgs(restarted.file("list.txt", listText(500, 5000)), "--quiet"), sameJournal)).stdout.trim();

    const out = await restarted.run(["status"], sameJournal);
    expect(out.code, out.stderr).toBe(0);
    const rows = lines(out.stdout).slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(new RegExp(`^${known}\tnumber_validation_batch\tGB\tprocessing`));
    expect(rows[1]).toBe(`${forgotten}\t\t\tnot found\t\t\t\t`);
    expect(out.stderr).toContain(`1 of these tasks is not known to ${restarted.sandbox.url}`);

    const json = await restarted.run(["status", "--json"], sameJournal);
    expect(json.code).toBe(0);
    expect(lines(json.stdout).map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ id: known, status: "processing" }),
      { id: forgotten, status: "not_found" },
    ]);
  });

  it("says how to submit when the journal is empty, and exits 0", async () => {
    const e = await sandbox();
    const out = await e.run(["status"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`No tasks of profile "default" in the local store yet. Submit one with: bulkcheck submit`);
  });

  it("imports a journal of bulkcheck 0.1 with a corrupt line, skipping that line with a warning", async () => {
    const e = await sandbox();
    const id = await submitted(e);
    // A journal 0.1 left, recording that task under its own key, after a line a crash cut short.
    const template = readFileSync(join(import.meta.dirname, "..", "fixtures", "journal-0.1", "journal.jsonl"), "utf8");
    const journal = template
      .replaceAll("{{BASE_URL}}", e.sandbox.url.replace(/\/$/, ""))
      .replaceAll("{{SOURCE}}", join(e.dir, "list-0.txt"))
      .replaceAll("{{TASK_ID}}", id);
    writeFileSync(join(e.configDir, "journal.jsonl"), "{not json\n" + journal);
    const out = await e.run(["status"]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("warning: skipping corrupt journal line 1");
    expect(out.stderr).toContain("from the journal of bulkcheck 0.1");
    expect(lines(out.stdout)[1]).toContain(id);
  });

  it("exits 3 for an id the service does not know", async () => {
    const e = await sandbox();
    const out = await e.run(["status", "0".repeat(32)]);
    expect(out.code).toBe(3);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("error:");
  });
});

describe("bulkcheck wait", () => {
  it("exits 0 once every task succeeded, with one line per status change and the ids on stdout", async () => {
    const e = await sandbox();
    const a = await submitted(e, 500, 0);
    const b = await submitted(e, 500, 1000);
    const out = await e.run(["wait", a, b, "--interval", "0.2"]);
    expect(out.code).toBe(0);
    expect(lines(out.stdout)).toEqual([`${a}\tsuccess`, `${b}\tsuccess`]);
    expect(out.stderr).toContain(`task ${a} success: 500 checked, 0 without result`);
    expect(out.stderr).toContain(`task ${b} success: 500 checked, 0 without result`);
    // One line per change, not per check.
    const stderr = lines(out.stderr);
    expect(new Set(stderr).size).toBe(stderr.length);
  });

  it("prints each finished task as a JSON line with --json", async () => {
    const e = await sandbox();
    const id = await submitted(e);
    const out = await e.run(["wait", id, "--interval", "0.2", "--json"]);
    expect(out.code).toBe(0);
    expect(lines(out.stdout).map((line) => JSON.parse(line) as unknown)).toEqual([
      expect.objectContaining({ id, status: "success", success_cnt: 500, result_ready: true }),
    ]);
  });

  it("exits 6 when a task failed, and says it was refunded", async () => {
    const e = await sandbox({ failRate: 1 });
    const id = await submitted(e);
    const out = await e.run(["wait", id, "--interval", "0.2"]);
    expect(out.code).toBe(6);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`task ${id} failed (fully refunded)`);
    expect(out.stderr).toContain(`error: 1 task(s) failed: ${id}.`);
    // What to do, as the exit-code tables in docs/reliability.md say: retry-failed (not a --resubmit of the whole list).
    expect(out.stderr).toContain(`bulkcheck retry-failed ${id}`);
    expect(out.stderr).not.toContain("--resubmit");
    expect(e.state().ledger.filter((entry) => entry.kind === "refund")).toEqual([
      expect.objectContaining({ task_id: id, micros: 500_000 }),
    ]);
  });

  it("exits 8 when --timeout runs out with the task still processing, and prints how to resume", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const id = await submitted(e);
    const before = e.clock.ms;
    const out = await e.run(["wait", id, "--interval", "0.2", "--timeout", "3"]);
    expect(out.code).toBe(8);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`error: Still processing after 3s: ${id}.`);
    expect(out.stderr).toContain(`Resume with: bulkcheck wait ${id}`);
    expect(e.clock.ms - before).toBeGreaterThanOrEqual(3000);
    expect(e.state().tasks[0]!.status).toBe("processing");
  });

  it("reads the ids from stdin with -", async () => {
    const e = await sandbox();
    const a = await submitted(e, 500, 0);
    const b = await submitted(e, 500, 1000);
    const out = await e.run(["wait", "-", "--interval", "0.2"], { stdin: `${a}\n${b}\n` });
    expect(out.code).toBe(0);
    expect(lines(out.stdout)).toEqual([`${a}\tsuccess`, `${b}\tsuccess`]);
  });

  it("polls no more often than --interval, with jitter that only lengthens the wait", async () => {
    const e = await sandbox({ numbersPerSecond: 100 });
    const id = await submitted(e);
    const sleeps: number[] = [];
    const clock = e.clock;
    const out = await e.run(["wait", id, "--interval", "0.5", "--quiet"], {
      sleep: async (ms) => {
        sleeps.push(ms);
        clock.ms += ms;
      },
    });
    expect(out.code).toBe(0);
    expect(sleeps.length).toBeGreaterThan(2);
    for (const ms of sleeps) {
      expect(ms).toBeGreaterThanOrEqual(500);
      expect(ms).toBeLessThanOrEqual(550);
    }
  });

  it("refuses an --interval under 30 s against a non-loopback base URL with exit 2, before any request", async () => {
    const e = await sandbox();
    const id = "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53";
    const out = await e.run(["wait", id, "--interval", "5", "--verbose"], { env: { BULKCHECK_BASE_URL: "http://example.invalid" } });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--interval 5 is too short: the service allows one check per task every 30 seconds.");
    expect(out.stderr).toContain("Use --interval 30 or more");
    expect(out.stderr).not.toMatch(/^(GET|POST) /m);
  });

  it("refuses submit --wait --interval under 30 s against a non-loopback base URL before uploading", async () => {
    const e = await sandbox();
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "5", "--verbose"), {
      env: { BULKCHECK_BASE_URL: "https://example.invalid" },
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--interval 5 is too short");
    expect(out.stderr).not.toMatch(/^(GET|POST) /m);
  });

  it("accepts a short --interval against localhost and any 127.x.x.x address", async () => {
    const e = await sandbox();
    const id = await submitted(e);
    const out = await e.run(["wait", id, "--interval", "0.2"], {
      env: { BULKCHECK_BASE_URL: e.sandbox.url.replace("127.0.0.1", "localhost") },
    });
    expect(out.code).toBe(0);
    const other = await sandbox({ host: "127.0.0.2" });
    const otherId = await submitted(other);
    const otherOut = await other.run(["wait", otherId, "--interval", "0.2"]);
    expect(otherOut.code).toBe(0);
    expect(otherOut.stderr).not.toContain("clear text");
  });

  it("refuses a malformed id or no id with exit 2", async () => {
    const e = await sandbox();
    expect((await e.run(["wait", "-"], { stdin: "" })).code).toBe(2);
    const bad = await e.run(["wait", "../etc/passwd"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not a task id");
    expect(e.state().stats.requests).toBe(0);
  });
});
