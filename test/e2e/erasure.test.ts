import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { allowSmallTasks } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, identifier, listText, submitAs, until, WAITING, type E2e } from "../helpers/sandbox.js";
import { filesHolding } from "../helpers/store.js";

/**
 * Issue 35, point 2: a number forgotten while a run is open stays forgotten when the run is
 * carried on. Killed while its task's result was being fetched (nothing of it staged or
 * recorded yet, so nothing for forget to rewrite), the run carried on fetched the result again:
 * the number was back in the ledger and in the output. Now forget remembers it, hashed, until
 * the runs open at it have ended.
 */
const sandbox = e2eSandboxes();

const ACTIVITY = "number_activity_batch";

/** How many erasures a store remembers (read as a maintainer would: the table itself). */
async function rememberedErasures(e: E2e, storeUrl: string | undefined): Promise<number> {
  if (storeUrl === undefined) {
    const db = new Database(join(e.configDir, "bulkcheck.db"), { readonly: true });
    try {
      return Number((db.prepare("SELECT count(*) AS n FROM erased_numbers").get() as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: storeUrl });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM bulkcheck.erased_numbers")).rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe("a number forgotten while a run is open", () => {
  it.each([
    ["the local store", () => Promise.resolve(undefined)],
    ["a team's store", () => createTestDatabase()],
  ])("stays out of the ledger and the output when the run, killed while fetching its result, is carried on (%s)", async (_, storeUrlOf) => {
    const e = await sandbox({ fakeClock: false, minTaskSize: 1 });
    const storeUrl = await storeUrlOf();
    // The run's upload files go to a temp directory of this test's own, searched below.
    const temp = tempDir("bulkcheck-erasure-tmp-");
    const env: Record<string, string> = { TMPDIR: temp, ...(storeUrl === undefined ? {} : { BULKCHECK_STORE_URL: storeUrl }) };
    await allowSmallTasks(e);
    const list = e.file("list.txt", listText(20));
    const [forgotten, kept] = gbList(2).map(identifier) as [string, string];
    const argv = [...submitAs(list, ACTIVITY, "GB", ...WAITING), "-o", "out.csv"];

    // The service holds the result back: the kill lands once the task has succeeded and its result is being fetched.
    e.sandbox.scriptFaults([{ route: "result", fault: "slow", delayMs: 60_000 }]);
    const run = e.spawn(argv, { env });
    await until(() => e.state().scripted_faults_pending === 0, 20_000);
    run.child.kill("SIGKILL");
    await run.done;
    expect(e.state().tasks).toHaveLength(1);
    expect(e.state().tasks[0]!.status).toBe("success");
    // Where it landed: nothing of the result staged or recorded, the upload file still in the temp directory.
    expect(filesHolding(join(e.configDir, "staging"), forgotten)).toEqual([]);
    expect((await e.bin(["ledger", "lookup", forgotten, "--json"], { env })).stdout).toBe("");
    expect(filesHolding(temp, forgotten)).not.toEqual([]);

    const forgot = await e.bin(["ledger", "forget", forgotten, "--yes", "--json"], { env });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(JSON.parse(forgot.stdout)).toMatchObject({ results_removed: 0, stores: [{ results: 0, remembered: 1 }] });
    expect(await rememberedErasures(e, storeUrl)).toBe(1);
    // The killed run's upload files went with the forget.
    expect(filesHolding(temp, forgotten)).toEqual([]);

    const again = await e.bin(argv, { env });
    expect(again.code, again.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
    const output = readFileSync(join(e.dir, "out.csv"), "utf8");
    expect(output).toContain(kept);
    expect(output).not.toContain(forgotten);
    expect(again.stderr).toContain("Checked 19, no result 1.");
    expect((await e.bin(["ledger", "lookup", forgotten, "--json"], { env })).stdout).toBe("");
    expect((await e.bin(["ledger", "lookup", kept, "--json"], { env })).stdout).toContain(kept);
    // The run that was open at the erasure has ended: what was remembered of it has gone.
    expect(await rememberedErasures(e, storeUrl)).toBe(0);
    expect(filesHolding(e.configDir, forgotten)).toEqual([]);
    expect(existsSync(temp) ? readdirSync(temp) : []).toEqual([]);
  });
});
