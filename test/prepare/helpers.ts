import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import {
  prepareList,
  type PrepareOptions,
  type PrepareResult,
  type PrepareSummary,
  type RowSource,
  type SourceRecord,
} from "../../src/prepare/index.js";

const dirs: string[] = [];

/** A fresh temp directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "bulkcheck-prepare-test-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A row source's data records one by one, across the batches it reads them in. */
export async function* recordsOf(rows: RowSource): AsyncGenerator<SourceRecord, void, undefined> {
  for await (const batch of rows.batches()) yield* batch;
}

/** Writes `content` (text as UTF-8, or raw bytes) to `name` in a temp directory and returns the path. */
export async function listFile(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(await tempDir(), name);
  await writeFile(path, content);
  return path;
}

/** The accounting invariant every preparation must keep. */
export function expectAccounted(summary: PrepareSummary): void {
  const { kept, invalid_cnt, no_code_cnt, other_country_cnt, duplicate_cnt, blank, rows_read, submitted_lines } = summary;
  const belowMin = summary.below_min_task ?? 0;
  expect(kept + invalid_cnt + no_code_cnt + other_country_cnt + duplicate_cnt + blank + belowMin).toBe(rows_read);
  expect(submitted_lines).toBe(rows_read - blank);
}

export interface Prepared extends PrepareResult {
  /** The upload identifiers, all chunks in order. */
  kept: string[];
}

/**
 * Runs prepareList in-thread (workers: 0, as vitest runs the TypeScript sources)
 * with output in a temp directory, checks the accounting invariant, and reads the upload back.
 */
export async function prepare(source: string | PrepareOptions["source"], options: Partial<PrepareOptions> = {}): Promise<Prepared> {
  const result = await prepareList({ source, country: "GB", workers: 0, outputDir: await tempDir(), ...options });
  expectAccounted(result.summary);
  const kept: string[] = [];
  for (const chunk of result.chunks) kept.push(...(await readFile(chunk.path, "utf8")).split("\n").filter((line) => line !== ""));
  expect(kept).toHaveLength(result.summary.kept);
  return { ...result, kept };
}

/** Prepares a CSV/TXT given as text. */
export async function prepareText(name: string, content: string | Uint8Array, options: Partial<PrepareOptions> = {}): Promise<Prepared> {
  return prepare(await listFile(name, content), options);
}
