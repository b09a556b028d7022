import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClient, normaliseBaseUrl } from "../../src/api/client.js";
import { STORE_FILE } from "../../src/cli/services.js";
import { InputRejectedError, PendingError, UsageError } from "../../src/errors.js";
import { taskOrigins } from "../../src/tasks/origins.js";
import type { Task } from "../../src/spec/task.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { downloadResults, productOf } from "../../src/tasks/download.js";
import { joinTaskResults } from "../../src/outputs/join.js";
import { retryList } from "../../src/run/retry-list.js";
import { tempDir } from "../helpers/cli.js";
import { allowSmallTasks, expectedResult, parseDelimited } from "../helpers/results-fixtures.js";
import { API_KEY, e2eSandboxes, gbList, identifier, lines, submitArgs, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();
const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((opened) => opened.close()));
});

const NO_RESULT_RATE = 0.3;
/** 20 distinct numbers, two of them again, and two lines that are no number. */
const NUMBERS = gbList(20);
const LIST = [...NUMBERS, NUMBERS[0], NUMBERS[5], "12345", "n/a"].join("\n") + "\n";
/** When a join says its tasks were checked. */
const CHECKED_AT = "2025-01-15T09:05:00.000Z";
const WITH_RESULT = NUMBERS.map(identifier).filter((id) => expectedResult("number_validation_batch", id, NO_RESULT_RATE) !== undefined);

/** A sandbox where a list of any size is one task, and the list submitted through the CLI. */
async function submittedList(...extra: string[]): Promise<{ e: E2e; file: string; ids: string[] }> {
  const e = await sandbox({ minTaskSize: 1, noResultRate: NO_RESULT_RATE });
  await allowSmallTasks(e);
  const file = e.file("list.txt", LIST);
  const out = await e.run(submitArgs(file, "--yes", "--quiet", ...extra));
  expect(out.code, out.stderr).toBe(0);
  return { e, file, ids: lines(out.stdout) };
}

/** The store in a state directory (the CLI's is its config directory in these tests). */
function storeIn(dir: string): SqliteStore {
  const store = SqliteStore.open(join(dir, STORE_FILE));
  closing.push(store);
  return store;
}

/**
 * What the tasks functions need, with a client of the sandbox and the store the CLI
 * submitted with (or `store`); counts the clients built.
 */
function depsOf(e: E2e, store = storeIn(e.configDir)) {
  const client = createClient({ baseUrl: e.sandbox.url, apiKey: API_KEY });
  closing.push(client);
  const built = { clients: 0 };
  const scope = { baseUrl: normaliseBaseUrl(e.sandbox.url).href.replace(/\/+$/, ""), profile: "default" };
  const deps = {
    client: async () => {
      built.clients++;
      return client;
    },
    store,
    scope,
    origins: (ids: readonly string[]) => taskOrigins(store, scope, ids),
    sleep: async () => {},
    signal: new AbortController().signal,
  };
  return { deps, client, built };
}

describe("downloadResults", () => {
  it("writes the tasks' results and returns the summary, the tasks as checked and what preparation excluded", async () => {
    const { e, ids } = await submittedList("--wait", "--interval", "1");
    const { deps } = depsOf(e);
    const path = join(e.dir, "results.csv");
    const outcome = await downloadResults(deps, ids, { path, force: false, format: "csv", colour: false });
    const [header, ...rows] = parseDelimited(readFileSync(path, "utf8"));
    expect(header).toEqual(["identifier", "activated"]);
    expect(rows.map((row) => row[0])).toEqual(WITH_RESULT);
    expect(outcome.summary.rowsWritten).toBe(WITH_RESULT.length);
    expect(outcome.tasks.map((task) => [task.id, task.status, task.success_cnt])).toEqual([[ids[0], "success", WITH_RESULT.length]]);
    expect(outcome.excluded).toEqual({ invalid_cnt: 2, no_code_cnt: 0, other_country_cnt: 0, duplicate_cnt: 2, blank: 0 });
  });

  it("knows one product per download, under either of its names", () => {
    const task = (id: string, product: string): Task => ({ id, product, status: "success", country: "GB", total: 1, created_at: "" });
    expect(productOf([task("a", "carrier_batch"), task("b", "global_carrier_batch")])).toBe("carrier_batch");
    expect(() => productOf([task("a", "carrier_batch"), task("b", "number_validation_batch")])).toThrow(UsageError);
    expect(() => productOf([task("a", "unknown_batch")])).toThrow("These tasks are of different products (unknown_batch)");
  });
});

describe("joinTaskResults", () => {
  it("refuses another file than the one submitted, and when told to accept it writes every row, warning first", async () => {
    const { e, file, ids } = await submittedList("--wait", "--interval", "1");
    const { deps } = depsOf(e);
    const copy = join(tempDir(), "copy.txt");
    copyFileSync(file, copy);
    const warnings: string[] = [];
    const path = join(e.dir, "joined.csv");
    const target = { sourcePath: copy, path, force: false, checkedAt: () => CHECKED_AT };
    const refused = joinTaskResults(deps, ids, target);
    await expect(refused).rejects.toThrow(InputRejectedError);
    await expect(refused).rejects.toThrow(`task ${ids[0]} was submitted from ${file}, not ${copy}.`);
    const outcome = await joinTaskResults({ ...deps, onWarning: (text) => warnings.push(text) }, ids, {
      ...target,
      acceptChangedSource: true,
    });
    expect(warnings).toEqual([
      `task ${ids[0]} was submitted from ${file}, not ${copy}; joining anyway (--force): rows whose numbers differ are marked no_result.`,
    ]);
    expect(outcome.serviceType).toBe("number_validation_batch");
    expect(outcome.tasks.map((task) => task.id)).toEqual(ids);
    expect(outcome.summary.rows).toBe(lines(LIST).length);
    expect(outcome.summary.byStatus).toMatchObject({ checked: WITH_RESULT.length, duplicate: 2, invalid: 2 });
    const joined = parseDelimited(readFileSync(path, "utf8"));
    expect(joined).toHaveLength(1 + lines(LIST).length);
    // A row with a result (a duplicate's too) says when its task was checked, as the target dates it.
    expect(joined[0]!.slice(2)).toEqual(["activated", "bulkcheck_status", "bc_checked_at"]);
    for (const row of joined.slice(1)) expect(row[4]).toBe(row[2] === "" ? "" : CHECKED_AT);
  });

  it("refuses tasks the store has no preparation for, before building a client", async () => {
    const { e, file, ids } = await submittedList();
    const { deps: elsewhere, built } = depsOf(e, storeIn(tempDir()));
    const refused = joinTaskResults(elsewhere, ids, {
      sourcePath: file,
      path: join(e.dir, "joined.csv"),
      force: false,
      checkedAt: () => CHECKED_AT,
    });
    await expect(refused).rejects.toThrow(UsageError);
    await expect(refused).rejects.toThrow(`There is no local record of how task ${ids[0]} was prepared`);
    expect(built.clients).toBe(0);
  });
});

describe("retryList", () => {
  it("rebuilds the task's list from the source and writes the numbers that got no result", async () => {
    const { e, ids } = await submittedList("--wait", "--interval", "1");
    const { deps, client } = depsOf(e);
    const dir = tempDir();
    const prepared: number[] = [];
    const list = await retryList({ ...deps, client, onPrepared: (result) => prepared.push(result.summary.kept) }, ids[0]!, dir);
    const withoutResult = NUMBERS.map(identifier).filter((id) => !WITH_RESULT.includes(id));
    expect(list.uploadedCount).toBe(NUMBERS.length);
    expect(prepared).toEqual([NUMBERS.length]);
    expect(list.retry.count).toBe(withoutResult.length);
    expect(lines(readFileSync(list.retry.path, "utf8"))).toEqual(withoutResult);
    expect(list.origin).toMatchObject({ product: "number_validation_batch", settings: { country: "GB" } });
  });

  it("refuses a task still processing, and one the store does not know", async () => {
    const { e, ids } = await submittedList();
    const { deps, client } = depsOf(e);
    await expect(retryList({ ...deps, client }, ids[0]!, tempDir())).rejects.toThrow(PendingError);
    e.clock.ms += 3_600_000;
    const unknown = retryList({ ...deps, client, store: storeIn(tempDir()) }, ids[0]!, tempDir());
    await expect(unknown).rejects.toThrow(UsageError);
    await expect(unknown).rejects.toThrow(`There is no local record of the list task ${ids[0]} was submitted from.`);
  });
});
