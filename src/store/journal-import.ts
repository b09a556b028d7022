import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { rename } from "node:fs/promises";
import { join } from "node:path";
import { legacyJournalEntries, type StagedEntry, type SubmitEntry, type TaskEntry } from "./legacy-journal.js";
import type { Lease, NewRun, RunRecord, RunStore, Scope, Store, StoreParts } from "./store.js";

/** The journal of bulkcheck 0.1: one JSON line per submit, task and staged result. */
export const LEGACY_JOURNAL = "journal.jsonl";

/**
 * How long after its last entry a submission of 0.1 may still be a run in progress. A
 * run of 0.1 left no record of having written its output, so the newest submission of
 * each command is continued by the first run of 0.2 (nothing it uploaded is paid for
 * twice), unless it is older than this or its staged results were already cleaned up
 * (which 0.1 did only after writing the output).
 */
const LEGACY_OPEN_FOR_MS = 24 * 60 * 60 * 1000;

/** The identity an adopted submission is found by: 0.1 did not record the flags, only what they resolved to. */
function legacyIdentity(scope: Scope, sourcePath: string | undefined, product: string, countryMode: string | undefined): string {
  return `legacy:${sha256(JSON.stringify([scope.baseUrl, scope.profile, sourcePath ?? "-", product, countryMode ?? ""]))}`;
}

/** What a command read, as far as it finds a run of 0.1: 0.1 kept no flags, so it is found by what they resolved to. */
export interface LegacyReading {
  sourcePath: string | undefined;
  product: string;
  /** The task country, `auto`, or undefined. */
  countryMode: string | undefined;
  /** How the list was read (PreparationSettings). */
  settings: unknown;
}

/** The open run of 0.1 adopted from its journal that read the same source the same way, if any: the command's unfinished run. */
export async function legacyRunOf(runs: RunStore, scope: Scope, reading: LegacyReading): Promise<RunRecord | undefined> {
  const legacy = await runs.open(scope, legacyIdentity(scope, reading.sourcePath, reading.product, reading.countryMode));
  return legacy && sameSettings(legacy.settings, reading.settings) ? legacy : undefined;
}

/** Settings as far as they decide which numbers are kept (a run of 0.1 recorded no country grouping's sizes the same way). */
function sameSettings(a: unknown, b: unknown): boolean {
  const comparable = (settings: unknown) => {
    const { countryGroups: _groups, digitsAs, ...rest } = (settings ?? {}) as Record<string, unknown>;
    return JSON.stringify({ ...rest, digitsAs: digitsAs ?? "international" });
  };
  return comparable(a) === comparable(b);
}

export interface AdoptedJournal {
  runs: number;
  tasks: number;
  /** Where the imported journal was moved to. */
  movedTo: string;
  /** Lines that could not be read (a crash cut them short, a hand edit): skipped. */
  corruptLines: number[];
}

/**
 * Adopts the journal of 0.1 (`journal.jsonl` in the state directory) once, as the store
 * opens (see openStoreAdopting): every
 * submission becomes a run of kind `legacy` with one task per part (idempotency key,
 * task id, staged result), so a task 0.1 submitted is continued, waited for and
 * downloaded, never submitted again. Runs and tasks are keyed by what the journal held,
 * so an import cut short is simply done again; the journal is then renamed
 * `journal.jsonl.imported`. Undefined when there is no journal to import.
 */
export async function adoptLegacyJournal(store: Store, stateDir: string, nowMs: number, lease: Lease): Promise<AdoptedJournal | undefined> {
  const path = join(stateDir, LEGACY_JOURNAL);
  if (!existsSync(path)) return undefined;
  const corruptLines: number[] = [];
  const entries = await readEntries(path, (line) => corruptLines.push(line));
  const groups = groupSubmissions(entries, join(stateDir, "staging"));
  const newest = new Map<string, Group>();
  for (const group of groups.values()) {
    const latest = newest.get(group.identity);
    if (!group.retryOf && (!latest || latest.at < group.at)) newest.set(group.identity, group);
  }
  let runs = 0;
  let tasks = 0;
  for (const group of groups.values()) {
    const open = newest.get(group.identity) === group && stillInProgress(group, nowMs);
    // A submission's run and its tasks are adopted together, or not at all.
    const added = await store.transaction(async (parts) => ({
      runs: await adoptRun(parts, group, open, lease),
      tasks: await adoptTasks(parts, group),
    }));
    runs += added.runs;
    tasks += added.tasks;
  }
  const movedTo = `${path}.imported`;
  await rename(path, movedTo);
  return { runs, tasks, movedTo, corruptLines };
}

/** Adds a submission's run unless it is there already (adopted before): 1 when added. */
async function adoptRun({ runs }: StoreParts, group: Group, open: boolean, lease: Lease): Promise<number> {
  if (await runs.get(group.id)) return 0;
  const created = await runs.create(runOf(group, open), lease);
  // An open run of this command already exists (adopted before, or started since): this one is history.
  if (created === "exists") await runs.create(runOf(group, false), lease);
  await runs.release(group.id, lease);
  return 1;
}

/** Adds a submission's parts not there yet, each with its idempotency key, task id and staged result: how many. */
async function adoptTasks({ tasks }: StoreParts, group: Group): Promise<number> {
  let added = 0;
  for (const part of group.parts) {
    if (await tasks.withKey(group.scope, part.submit.idempotency_key)) continue;
    await tasks.add({
      scope: group.scope,
      runId: group.id,
      part: part.submit.chunk.index,
      parts: part.submit.chunk.of,
      idempotencyKey: part.submit.idempotency_key,
      ...(part.task ? { taskId: part.task.task_id, replayed: part.task.replayed } : {}),
      product: part.submit.product,
      ...(part.submit.country ? { country: part.submit.country } : {}),
      count: part.submit.chunk.count,
      sha256: part.submit.chunk.sha256,
      submittedAt: part.submit.at,
      ...(part.submit.retry_of ? { retryOf: part.submit.retry_of } : {}),
      ...(part.staged
        ? { staged: { file: join(group.stagingDir, part.staged.file), bytes: part.staged.bytes, sha256: part.staged.sha256 } }
        : {}),
    });
    added++;
  }
  return added;
}

interface Part {
  submit: SubmitEntry;
  task?: TaskEntry;
  staged?: StagedEntry;
}

interface Group {
  id: string;
  identity: string;
  scope: Scope;
  retryOf?: string;
  /** The time of its latest entry. */
  at: string;
  parts: Part[];
  /** Where 0.1 staged this submission's results: a directory named by a hash of its keys. */
  stagingDir: string;
}

async function readEntries(path: string, onCorrupt: (line: number) => void): Promise<Array<SubmitEntry | TaskEntry | StagedEntry>> {
  // The journal's own reader: it skips lines a crash cut short, as 0.1 did.
  const entries = [];
  for await (const entry of legacyJournalEntries(path, onCorrupt)) entries.push(entry);
  return entries;
}

/** Submissions by what made them one run in 0.1: the scope, the source as read, the product, country, settings and split. */
function groupSubmissions(entries: ReadonlyArray<SubmitEntry | TaskEntry | StagedEntry>, stagingRoot: string): Map<string, Group> {
  const parts = new Map<string, Part>();
  const byTaskId = new Map<string, Part>();
  for (const entry of entries) {
    if (entry.type === "submit") {
      const key = JSON.stringify([entry.base_url, entry.profile, entry.idempotency_key]);
      parts.set(key, { ...parts.get(key), submit: entry });
    } else if (entry.type === "task") {
      const part = parts.get(JSON.stringify([entry.base_url, entry.profile, entry.idempotency_key]));
      if (part) {
        part.task = entry;
        byTaskId.set(entry.task_id, part);
      }
    } else {
      const part = byTaskId.get(entry.task_id);
      if (part) part.staged = entry;
    }
  }
  const groups = new Map<string, Group>();
  for (const part of parts.values()) {
    const { submit } = part;
    if (!submit.base_url) continue; // entries of versions before scopes were journalled: no service to continue with
    const scope = { baseUrl: submit.base_url, profile: submit.profile };
    const countryMode = submit.preparation?.anyRegion ? "auto" : submit.preparation?.country;
    const key = JSON.stringify([
      submit.base_url,
      submit.profile,
      submit.source.path ?? "",
      submit.source.sha256 ?? "",
      submit.product,
      countryMode ?? "",
      submit.preparation ?? null,
      submit.chunk.of,
      submit.retry_of ?? "",
    ]);
    let group = groups.get(key);
    if (!group) {
      group = {
        id: `legacy-${sha256(key).slice(0, 16)}`,
        identity: legacyIdentity(scope, submit.source.path, submit.product, countryMode),
        scope,
        ...(submit.retry_of ? { retryOf: submit.retry_of } : {}),
        at: submit.at,
        parts: [],
        stagingDir: "",
      };
      groups.set(key, group);
    }
    group.parts.push(part);
    const latest = [submit.at, part.task?.at, part.staged?.at]
      .filter((at) => at !== undefined)
      .sort()
      .at(-1)!;
    if (latest > group.at) group.at = latest;
  }
  for (const group of groups.values()) {
    group.parts.sort((a, b) => a.submit.chunk.index - b.submit.chunk.index);
    // 0.1 named a run's staging directory by the hash of its parts' keys, in order.
    const keys = group.parts.map((part) => part.submit.idempotency_key).join("\n");
    group.stagingDir = join(stagingRoot, sha256(keys).slice(0, 32));
  }
  return groups;
}

/** Whether 0.1 may not have finished this submission: recent, and not known to have cleaned up its staged results. */
function stillInProgress(group: Group, nowMs: number): boolean {
  if (nowMs - Date.parse(group.at) > LEGACY_OPEN_FOR_MS) return false;
  const staged = group.parts.some((part) => part.staged);
  return !staged || existsSync(group.stagingDir);
}

function runOf(group: Group, open: boolean): NewRun {
  const { submit } = group.parts[0]!;
  const countryMode = submit.preparation?.anyRegion ? "auto" : (submit.preparation?.country ?? submit.country);
  const run: Omit<RunRecord, "lease" | "finishedAt"> = {
    id: group.id,
    scope: group.scope,
    identity: open ? group.identity : `${group.identity}:${group.id}`,
    kind: group.retryOf ? "retry" : "legacy",
    state: open ? "open" : "finished",
    startedAt: group.parts.map((part) => part.submit.at).sort()[0]!,
    product: submit.product,
    ...(countryMode ? { country: countryMode } : {}),
    source: {
      ...(submit.source.path ? { path: submit.source.path } : {}),
      ...(submit.source.size === undefined ? {} : { size: submit.source.size }),
      ...(submit.source.mtime_ms === undefined ? {} : { mtimeMs: submit.source.mtime_ms }),
      ...(submit.source.sha256 ? { sha256: submit.source.sha256 } : {}),
    },
    settings: submit.preparation ?? null,
    ...(submit.prepared ? { prepared: submit.prepared } : {}),
    note: "imported from the journal of bulkcheck 0.1",
  };
  return run;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
