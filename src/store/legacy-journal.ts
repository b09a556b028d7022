import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { PreparationSettings } from "../prepare/settings.js";
import { ROW_COUNTS, type PrepareSummary } from "../prepare/summary.js";

/*
 * The journal of bulkcheck 0.1 (`journal.jsonl`), read once to import it into the store
 * (see journal-import.ts): an append-only JSON-lines file of submits, tasks and staged
 * results. A corrupt line (a crash mid-write, a hand edit) is reported and skipped.
 */

/**
 * Which service and account an entry belongs to. A key, a task id or a list means
 * something only to the service it was sent to: the sandbox's tasks are unknown to
 * production, and a list tried on one has not been paid for on the other.
 */
export interface JournalScope {
  /** The service's base URL as the client addresses it (see `normaliseBaseUrl`), without a trailing slash. */
  base_url: string;
  profile: string;
}

/** Written before the first upload attempt, so a re-run after a crash finds its idempotency key. */
export interface SubmitEntry extends JournalScope {
  type: "submit";
  at: string;
  idempotency_key: string;
  product: string;
  country?: string;
  /**
   * The source list as the user named it (absolute path; absent for stdin) and,
   * as it was read for this submit, its size, modification time and content hash.
   */
  source: { path?: string; size?: number; mtime_ms?: number; sha256?: string };
  /** Which part of the prepared list this upload is, and the hash of the bytes uploaded. */
  chunk: { index: number; of: number; count: number; sha256: string };
  /** How the list was prepared, so results can be joined back with identical identifiers. */
  preparation?: PreparationSettings;
  /** The preparation summary of the whole source (the same on every part of a split list). */
  prepared?: PrepareSummary;
  /** For retry-failed: the task whose numbers without a result this upload holds. */
  retry_of?: string;
}

/** Written once the service has answered with a task. */
export interface TaskEntry extends JournalScope {
  type: "task";
  at: string;
  idempotency_key: string;
  task_id: string;
  replayed: boolean;
}

/**
 * Written once a finished task's result file sits whole in the run's staging
 * directory, so a re-run reuses it (when its bytes still hash the same) instead of
 * downloading it again.
 */
export interface StagedEntry {
  type: "staged";
  at: string;
  idempotency_key: string;
  task_id: string;
  /** The file's name inside the staging directory (never a path from the service). */
  file: string;
  bytes: number;
  sha256: string;
}

export type JournalEntry = SubmitEntry | TaskEntry | StagedEntry;

/** The entries of a journal file, oldest first; none when there is no file. */
export async function* legacyJournalEntries(
  path: string,
  onCorrupt: (lineNumber: number) => void = () => {},
): AsyncGenerator<JournalEntry> {
  let lines;
  try {
    const stream = createReadStream(path, { encoding: "utf8" });
    await new Promise<void>((resolve, reject) => stream.once("open", () => resolve()).once("error", reject));
    lines = createInterface({ input: stream, crlfDelay: Infinity });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (!line.trim()) continue;
    const entry = parseEntry(line);
    if (entry) yield entry;
    else onCorrupt(lineNumber);
  }
}

/** The scope of an entry as read; entries of versions that did not record it get one that matches no service. */
function scopeOf(entry: Partial<JournalScope>): JournalScope {
  return {
    base_url: typeof entry.base_url === "string" ? entry.base_url : "",
    profile: typeof entry.profile === "string" ? entry.profile : "",
  };
}

function parseEntry(line: string): JournalEntry | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== "object" || value === null) return undefined;
    const entry = value as Partial<JournalEntry>;
    if (typeof entry.idempotency_key !== "string") return undefined;
    if (entry.type === "submit" && typeof entry.product === "string") return readableSubmit(entry as SubmitEntry);
    if (entry.type === "task" && typeof entry.task_id === "string") return { ...(entry as TaskEntry), ...scopeOf(entry) };
    if (entry.type === "staged" && isStaged(entry)) return entry;
    return undefined;
  } catch {
    return undefined;
  }
}

function isStaged(entry: Partial<StagedEntry>): entry is StagedEntry {
  return (
    typeof entry.task_id === "string" &&
    typeof entry.file === "string" &&
    Number.isSafeInteger(entry.bytes) &&
    typeof entry.sha256 === "string"
  );
}

/**
 * A submit entry keeps its idempotency key whatever else is wrong with it (the key
 * is what stops a re-run from paying twice); a `preparation` or `prepared` that a
 * hand edit or another version left unreadable is dropped, so the join and
 * retry-failed say there is no record instead of failing on a missing field.
 */
function readableSubmit(entry: SubmitEntry): SubmitEntry {
  const { preparation, prepared, ...rest } = entry;
  return {
    ...rest,
    ...scopeOf(entry),
    ...(isPreparationSettings(preparation) ? { preparation } : {}),
    ...(isPrepareSummary(prepared) ? { prepared } : {}),
  };
}

function isPreparationSettings(value: unknown): value is PreparationSettings {
  const settings = value as Partial<PreparationSettings> | null | undefined;
  return (
    typeof settings === "object" &&
    settings !== null &&
    settings.version === 1 &&
    typeof settings.requireCountryCode === "boolean" &&
    typeof settings.strictRegion === "boolean" &&
    typeof settings.hasHeader === "boolean" &&
    typeof settings.encoding === "string" &&
    Number.isInteger(settings.column?.index) &&
    typeof settings.libphonenumber?.version === "string"
  );
}

function isPrepareSummary(value: unknown): value is PrepareSummary {
  if (typeof value !== "object" || value === null) return false;
  const summary = value as Partial<Record<string, unknown>>;
  return ROW_COUNTS.every((field) => typeof summary[field] === "number");
}
