import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import Database from "libsql";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { e2eSandboxes, lines, listText, type E2e } from "../helpers/sandbox.js";

/**
 * Recording off the download's path: the output is the CSV passed through whether the ledger
 * is on or off, and the result is recorded by a worker (the built CLI's) from a copy of it.
 */
const sandbox = e2eSandboxes();

/** Submits `count` carrier numbers (in the list's own order) with the ledger off, and waits until the task succeeded; returns its id. */
async function finishedCarrierTask(e: E2e, count: number): Promise<string> {
  const list = e.file("list.txt", listText(count));
  const out = await e.bin(["submit", list, "--type", "carrier_batch", "--country", "GB", "--yes", "--quiet", "--no-ledger"]);
  expect(out.code, out.stderr).toBe(0);
  const id = out.stdout.trim();
  expect((await e.bin(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
  return id;
}

/** What the store holds of a task's result: whether it is marked recorded, and its rows. */
function ledgerOf(e: E2e, taskId: string): { recorded: boolean; rows: number } {
  const db = new Database(join(e.configDir, "bulkcheck.db"), { readonly: true });
  try {
    const task = db.prepare("SELECT ref, recorded_at FROM tasks WHERE task_id = ?").raw().get([taskId]) as
      [number, string | null] | undefined;
    if (!task) return { recorded: false, rows: 0 };
    const [rows] = db.prepare("SELECT count(*) FROM results WHERE task_ref = ?").raw().get([task[0]]) as [number];
    return { recorded: task[1] !== null, rows };
  } finally {
    db.close();
  }
}

describe("recording a download in the ledger", () => {
  it("writes the same bytes with the ledger on and off, and records every row", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 100_000 });
    const id = await finishedCarrierTask(e, 3000);
    const off = await e.bin(["download", id, "-o", "off.csv", "--no-ledger"]);
    expect(off.code, off.stderr).toBe(0);
    expect(ledgerOf(e, id).recorded).toBe(false);
    const on = await e.bin(["download", id, "-o", "on.csv"]);
    expect(on.code, on.stderr).toBe(0);
    expect(readFileSync(join(e.dir, "on.csv")).equals(readFileSync(join(e.dir, "off.csv")))).toBe(true);
    expect(ledgerOf(e, id)).toEqual({ recorded: true, rows: 3000 });
  });

  it("killed while recording, leaves the task unrecorded or recorded whole; the next download records it once", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 100_000, balanceMicros: 1e9 });
    const rows = 20_000;
    const id = await finishedCarrierTask(e, rows);
    // The download's copy of the result lives in its temp directory from the first byte until it is recorded.
    const temp = tempDir("bulkcheck-recording-temp-");
    const copying = (pid: number | undefined) =>
      readdirSync(temp).some((name) => name.startsWith(`.bulkcheck-recording.bulkcheck-${pid}-`));
    // The rows go to the write-ahead log as the recording's transaction commits (~2 MB for these rows).
    const wal = join(e.configDir, "bulkcheck.db-wal");
    const walBytes = () => (existsSync(wal) ? statSync(wal).size : 0);
    const kills: Array<{ when: "copying" | "committing"; afterMs: number }> = [
      ...[0, 100, 300].map((afterMs) => ({ when: "copying" as const, afterMs })),
      ...[0, 2, 10].map((afterMs) => ({ when: "committing" as const, afterMs })),
    ];
    for (const { when, afterMs } of kills) {
      const walBefore = walBytes();
      const run = e.spawn(["download", id, "-o", "out.csv", "--force"], { env: { TMPDIR: temp } });
      const moment = when === "copying" ? () => copying(run.child.pid) : () => walBytes() > walBefore + 1_000_000;
      while (!moment() && run.child.exitCode === null) await delay(1);
      await delay(afterMs);
      run.child.kill("SIGKILL");
      await run.done;
      const left = ledgerOf(e, id);
      if (left.recorded) expect(left.rows, `recorded, killed ${afterMs} ms after ${when}`).toBe(rows);
      // Rows this few go in one transaction: a task not marked recorded has none.
      else expect(left.rows, `unrecorded, killed ${afterMs} ms after ${when}`).toBe(0);
    }
    const again = await e.bin(["download", id, "-o", "again.csv"], { env: { TMPDIR: temp } });
    expect(again.code, again.stderr).toBe(0);
    expect(ledgerOf(e, id)).toEqual({ recorded: true, rows });
    // What killed downloads left in the temp directory is removed by the next one.
    expect(readdirSync(temp).filter((name) => name.startsWith(".bulkcheck-recording."))).toEqual([]);
  });

  it("a submit --wait killed while recording its staged result is carried on, and the result recorded once", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 100_000, balanceMicros: 1e9 });
    const rows = 20_000;
    const list = e.file("list.txt", listText(rows));
    const argv = ["submit", list, "--type", "carrier_batch", "--country", "GB", "--yes", "--wait", "--interval", "0.2", "-o", "out.csv"];
    const staging = join(e.configDir, "staging");
    const staged = () =>
      existsSync(staging) && readdirSync(staging, { recursive: true, encoding: "utf8" }).some((name) => name.endsWith("part-1.result"));
    const wal = join(e.configDir, "bulkcheck.db-wal");
    const walBytes = () => (existsSync(wal) ? statSync(wal).size : 0);
    const run = e.spawn(argv);
    while (!staged() && run.child.exitCode === null) await delay(1);
    // Staged, then recorded by a worker: killed once its rows reach the write-ahead log.
    const walStaged = walBytes();
    while (walBytes() < walStaged + 1_000_000 && run.child.exitCode === null) await delay(1);
    run.child.kill("SIGKILL");
    await run.done;
    const [task] = e.state().tasks;
    const left = ledgerOf(e, task!.id);
    if (left.recorded) expect(left.rows).toBe(rows);
    else expect(left.rows).toBe(0);

    const again = await e.bin(argv);
    expect(again.code, again.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
    expect(ledgerOf(e, task!.id)).toEqual({ recorded: true, rows });
    expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(rows + 1);
  });
});
