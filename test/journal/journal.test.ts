import { appendFileSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Journal, recordOfTask, recordWithKey, type JournalScope, type SubmitEntry, type TaskEntry } from "../../src/journal/journal.js";
import type { PreparationSettings } from "../../src/prepare/settings.js";
import { tempDir } from "../helpers/cli.js";

const SCOPE: JournalScope = { base_url: "https://api.example.com", profile: "default" };

const submit = (key: string, scope = SCOPE): SubmitEntry => ({
  type: "submit",
  at: "2026-11-22T00:00:00.000Z",
  ...scope,
  idempotency_key: key,
  product: "carrier_batch",
  country: "GB",
  source: { path: "/data/list.csv" },
  chunk: { index: 0, of: 1, count: 600, sha256: "ab".repeat(32) },
});

const task = (key: string, id: string, scope = SCOPE): TaskEntry => ({
  type: "task",
  at: "2026-11-22T00:00:01.000Z",
  ...scope,
  idempotency_key: key,
  task_id: id,
  replayed: false,
});

describe("Journal", () => {
  it("joins submit entries with their task ids and finds them by key and id", async () => {
    const journal = new Journal(tempDir());
    await journal.append(submit("k1"));
    await journal.append(task("k1", "t1"));
    await journal.append(submit("k2"));
    expect(recordWithKey(await journal.records(), "k1", SCOPE)?.taskId).toBe("t1");
    expect(recordWithKey(await journal.records(), "k2", SCOPE)?.taskId).toBeUndefined();
    expect(recordOfTask(await journal.records(), "t1")?.submit.source.path).toBe("/data/list.csv");
    expect(await journal.recentTaskIds(SCOPE)).toEqual(["t1"]);
  });

  it("keeps one key apart per service and profile: the sandbox's task is not production's", async () => {
    const journal = new Journal(tempDir());
    const sandbox = { base_url: "http://127.0.0.1:8787", profile: "default" };
    const prod = { base_url: "https://api.example.com", profile: "prod" };
    await journal.append(submit("k1", sandbox));
    await journal.append(task("k1", "sandbox-task", sandbox));
    await journal.append(submit("k1", prod));
    expect(recordWithKey(await journal.records(), "k1", sandbox)?.taskId).toBe("sandbox-task");
    expect(recordWithKey(await journal.records(), "k1", prod)).toMatchObject({ submit: { base_url: prod.base_url }, taskId: undefined });
    expect(recordWithKey(await journal.records(), "k1", { ...prod, profile: "default" })).toBeUndefined();
    await journal.append(task("k1", "prod-task", prod));
    expect(await journal.recentTaskIds(prod)).toEqual(["prod-task"]);
    expect(await journal.recentTaskIds(sandbox)).toEqual(["sandbox-task"]);
  });

  it("lists a scope's task ids newest first, up to the limit", async () => {
    const journal = new Journal(tempDir());
    for (const n of [1, 2, 3]) {
      await journal.append(submit(`k${n}`));
      await journal.append(task(`k${n}`, `t${n}`));
    }
    expect(await journal.recentTaskIds(SCOPE)).toEqual(["t3", "t2", "t1"]);
    expect(await journal.recentTaskIds(SCOPE, 2)).toEqual(["t3", "t2"]);
  });

  it("matches no service with an entry written before entries named their service", async () => {
    const journal = new Journal(tempDir());
    const { base_url: _url, ...older } = submit("k1");
    appendFileSync(journal.path, JSON.stringify(older) + "\n");
    expect(recordWithKey(await journal.records(), "k1", SCOPE)).toBeUndefined();
    expect((await journal.records())[0]?.submit.idempotency_key).toBe("k1");
  });

  it("keeps the latest staged result of each task, and staged entries change no record", async () => {
    const journal = new Journal(tempDir());
    await journal.append(submit("k1"));
    await journal.append({ type: "task", at: "x", ...SCOPE, idempotency_key: "k1", task_id: "t1", replayed: false });
    const staged = { type: "staged", at: "x", idempotency_key: "k1", task_id: "t1", file: "part-1.result", bytes: 10 } as const;
    await journal.append({ ...staged, sha256: "aa".repeat(32) });
    await journal.append({ ...staged, sha256: "bb".repeat(32) });
    appendFileSync(journal.path, '{"type":"staged","idempotency_key":"k1","task_id":"t2"}\n');
    expect([...(await journal.stagedResults()).entries()]).toEqual([["t1", { ...staged, sha256: "bb".repeat(32) }]]);
    expect((await journal.records()).map((record) => [record.submit.idempotency_key, record.taskId])).toEqual([["k1", "t1"]]);
  });

  it("is created 0600 and returns nothing before the first entry", async () => {
    const journal = new Journal(tempDir());
    expect(await journal.records()).toEqual([]);
    await journal.append(submit("k1"));
    expect(statSync(journal.path).mode & 0o777).toBe(0o600);
  });

  it("skips a corrupt line with a warning and keeps reading", async () => {
    const corrupt: number[] = [];
    const journal = new Journal(tempDir(), (line) => corrupt.push(line));
    await journal.append(submit("k1"));
    appendFileSync(journal.path, '{"type":"task","idempotency_key":"k1","task_\n');
    await journal.append(task("k1", "t9"));
    expect(recordWithKey(await journal.records(), "k1", SCOPE)?.taskId).toBe("t9");
    expect(corrupt).toEqual([2]);
  });

  it("keeps every line whole when many appends race", async () => {
    const journal = new Journal(tempDir());
    await Promise.all(Array.from({ length: 200 }, (_, i) => journal.append(submit(`key-${i}-${"x".repeat(2000)}`))));
    const lines = readFileSync(journal.path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(200);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("reads back the preparation settings and summary it was given", async () => {
    const journal = new Journal(tempDir());
    const preparation: PreparationSettings = {
      version: 1,
      country: "GB",
      requireCountryCode: false,
      strictRegion: true,
      column: { index: 2, name: "phone" },
      delimiter: ",",
      hasHeader: true,
      encoding: "utf8",
      libphonenumber: { version: "1.13.16", metadata: "max" },
    };
    const prepared = {
      rows_read: 3,
      submitted_lines: 3,
      kept: 2,
      invalid_cnt: 1,
      no_code_cnt: 0,
      other_country_cnt: 0,
      duplicate_cnt: 0,
      blank: 0,
      national_normalised: 1,
      shared_code_regions: {},
      extensions_dropped: 0,
      spreadsheet_expanded: 0,
      ambiguous: { total: 0, international: 0, national: 0, resolved_by: "convention" as const, votes: { international: 0, national: 0 } },
      encoding: "utf8" as const,
      encoding_source: "detected" as const,
    };
    await journal.append({ ...submit("k1"), preparation, prepared });
    expect(recordWithKey(await journal.records(), "k1", SCOPE)?.submit).toMatchObject({ preparation, prepared });
  });

  it("keeps the key of an entry whose preparation or summary it cannot read, without them", async () => {
    const journal = new Journal(tempDir());
    appendFileSync(
      journal.path,
      JSON.stringify({ ...submit("k1"), preparation: { version: 2, columns: [1] }, prepared: { kept: "many" } }) + "\n",
    );
    const record = recordWithKey(await journal.records(), "k1", SCOPE);
    expect(record?.submit.idempotency_key).toBe("k1");
    expect(record?.submit).not.toHaveProperty("preparation");
    expect(record?.submit).not.toHaveProperty("prepared");
  });
});
