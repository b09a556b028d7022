import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { holdSlots } from "../helpers/fault-fixtures.js";
import { tempDir } from "../helpers/cli.js";
import { API_KEY, e2eSandboxes, lines, listText, submitArgs, until } from "../helpers/sandbox.js";

/**
 * Ten bulkcheck processes at once, sharing one config directory (one install, one
 * journal), against a service with five request slots. Real processes and clock.
 */
const sandbox = e2eSandboxes();
const PROCESSES = 10;

describe("ten concurrent submits against five slots", () => {
  it("all succeed through 42901 back-off, each with one task, the journal stays valid JSON lines, and re-runs return the same tasks", async () => {
    const e = await sandbox({ fakeClock: false, maxInFlight: 5, retryAfterSeconds: 1 });
    // Sizes differ, so each list's task can be told apart in the sandbox.
    const lists = Array.from({ length: PROCESSES }, (_, i) => e.file(`list-${i}.txt`, listText(500 + i, i * 1000)));
    // All five slots are taken by uploads that stall, so every submit first meets 42901.
    const held = await holdSlots(e.sandbox.url, API_KEY, 5);
    await until(() => e.state().stats.slots_in_flight === 5);
    const runs = lists.map((list) => e.spawn(submitArgs(list, "--yes", "--verbose")));
    try {
      await until(() => runs.every((run) => /code 42901/.test(run.output().stderr) || run.child.exitCode !== null), 30_000);
    } finally {
      held.release();
    }
    const results = await Promise.all(runs.map((run) => run.done));

    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/^retry: attempt 2 in \d+\.\ds \(42901 all request slots are occupied\)$/m);
    }
    const state = e.state();
    expect(state.tasks).toHaveLength(PROCESSES);
    const bySize = new Map(state.tasks.map((task) => [task.submitted_lines, task.id]));
    results.forEach((result, i) => expect(lines(result.stdout)).toEqual([bySize.get(500 + i)]));

    // Every line parses on its own: concurrent appends did not interleave.
    const journal = readFileSync(join(e.configDir, "journal.jsonl"), "utf8");
    expect(journal.endsWith("\n")).toBe(true);
    const entries = lines(journal).map((line) => JSON.parse(line) as { type: string; task_id?: string });
    expect(entries.filter((entry) => entry.type === "submit")).toHaveLength(PROCESSES);
    expect(new Set(entries.flatMap((entry) => (entry.type === "task" ? [entry.task_id] : [])))).toEqual(
      new Set(state.tasks.map((task) => task.id)),
    );

    // The config dir was fresh, so the ten runs raced to create the install secret that
    // derives idempotency keys; had two used different secrets, a re-run would make a second task.
    const again = await Promise.all(lists.map((list) => e.spawn(submitArgs(list, "--yes")).done));
    expect(again.map((result) => result.stdout)).toEqual(results.map((result) => result.stdout));
    for (const result of again) expect(result.stderr).toContain("was already submitted");
    expect(e.state().tasks).toHaveLength(PROCESSES);
    expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(PROCESSES);
  }, 90_000);
});

describe("processes starting together on a fresh install", () => {
  it("agree on one install secret, so the idempotency keys they derive are the ones every later run derives", async () => {
    const dir = tempDir("bulkcheck-secret-race-");
    const store = new URL("../../dist/config/store.js", import.meta.url).href;
    // Each process opens the store, then spins until the same instant before creating the secret.
    const script = `const { ConfigStore } = await import(${JSON.stringify(store)}); const s = new ConfigStore(process.argv[1]); while (Date.now() < Number(process.argv[2])) {} console.log(await s.installSecret());`;
    const at = String(Date.now() + 1500);
    const run = promisify(execFile);
    const outputs = await Promise.all(
      Array.from({ length: 10 }, () => run(process.execPath, ["--input-type=module", "-e", script, dir, at])),
    );
    const secrets = new Set(outputs.map((output) => output.stdout.trim()));
    expect(secrets.size).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).install_secret).toBe([...secrets][0]);
  });
});
