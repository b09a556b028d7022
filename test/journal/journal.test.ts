import { appendFileSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Journal, type SubmitEntry } from "../../src/journal/journal.js";
import type { PreparationSettings } from "../../src/prepare/settings.js";
import { tempDir } from "../helpers/cli.js";

const submit = (key: string): SubmitEntry => ({
  type: "submit",
  at: "2026-11-22T00:00:00.000Z",
  idempotency_key: key,
  product: "carrier_batch",
  country: "GB",
  profile: "default",
  source: { path: "/data/list.csv" },
  chunk: { index: 0, of: 1, count: 600, sha256: "ab".repeat(32) },
});

describe("Journal", () => {
  it("joins submit entries with their task ids and finds them by key and id", async () => {
    const journal = new Journal(tempDir());
    await journal.append(submit("k1"));
    await journal.append({ type: "task", at: "2026-11-22T00:00:01.000Z", idempotency_key: "k1", task_id: "t1", replayed: false });
    await journal.append(submit("k2"));
    expect((await journal.findByKey("k1"))?.taskId).toBe("t1");
    expect((await journal.findByKey("k2"))?.taskId).toBeUndefined();
    expect((await journal.findByTaskId("t1"))?.submit.source.path).toBe("/data/list.csv");
    expect(await journal.recentTaskIds(10)).toEqual(["t1"]);
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
    await journal.append({ type: "task", at: "x", idempotency_key: "k1", task_id: "t9", replayed: false });
    expect((await journal.findByKey("k1"))?.taskId).toBe("t9");
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
    expect((await journal.findByKey("k1"))?.submit).toMatchObject({ preparation, prepared });
  });

  it("keeps the key of an entry whose preparation or summary it cannot read, without them", async () => {
    const journal = new Journal(tempDir());
    appendFileSync(
      journal.path,
      JSON.stringify({ ...submit("k1"), preparation: { version: 2, columns: [1] }, prepared: { kept: "many" } }) + "\n",
    );
    const record = await journal.findByKey("k1");
    expect(record?.submit.idempotency_key).toBe("k1");
    expect(record?.submit).not.toHaveProperty("preparation");
    expect(record?.submit).not.toHaveProperty("prepared");
  });
});
