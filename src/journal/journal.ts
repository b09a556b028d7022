import { createReadStream } from "node:fs";
import { appendFile, chmod, mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { PreparationSettings } from "../prepare/settings.js";
import { ROW_COUNTS, type PrepareSummary } from "../prepare/summary.js";

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

export interface JournalRecord {
  submit: SubmitEntry;
  taskId?: string;
}

/**
 * An append-only JSON-lines record of every submit. Each entry is one `write`
 * to a file opened with O_APPEND, so concurrent bulkcheck processes never
 * interleave lines. A corrupt line (a crash mid-write, a hand edit) is reported
 * through `onCorrupt` and skipped.
 */
export class Journal {
  readonly path: string;

  constructor(
    readonly dir: string,
    private readonly onCorrupt: (lineNumber: number) => void = () => {},
  ) {
    this.path = join(dir, "journal.jsonl");
  }

  /**
   * Appends one entry. When the file does not end with a newline (a crash or a
   * full disk cut its last line short), the entry starts on a line of its own:
   * the cut line is skipped as corrupt, and this one survives instead of being
   * glued onto it. A blank line, should two processes both repair, is skipped too.
   */
  async append(entry: JournalEntry): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const repair = (await this.endsMidLine()) ? "\n" : "";
    await appendFile(this.path, repair + JSON.stringify(entry) + "\n", { mode: 0o600, flag: "a" });
    await chmod(this.path, 0o600);
  }

  /** Whether the file's last byte is not a newline (false for no file, or an empty one). */
  private async endsMidLine(): Promise<boolean> {
    const handle = await open(this.path, "r").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (!handle) return false;
    try {
      const { size } = await handle.stat();
      if (size === 0) return false;
      const { buffer } = await handle.read(Buffer.alloc(1), 0, 1, size - 1);
      return buffer[0] !== 0x0a;
    } finally {
      await handle.close();
    }
  }

  async *entries(): AsyncGenerator<JournalEntry> {
    let lines;
    try {
      const stream = createReadStream(this.path, { encoding: "utf8" });
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
      else this.onCorrupt(lineNumber);
    }
  }

  /**
   * Submit records joined with the task id the service gave them, oldest first
   * (by their latest submit entry). A key is one record per scope: the same list
   * sent to the sandbox and to production is two submissions.
   */
  async records(): Promise<JournalRecord[]> {
    const byKey = new Map<string, JournalRecord>();
    for await (const entry of this.entries()) {
      if (entry.type === "staged") continue;
      const key = recordKey(entry);
      if (entry.type === "submit") {
        const taskId = byKey.get(key)?.taskId;
        byKey.delete(key);
        byKey.set(key, { submit: entry, taskId });
      } else if (entry.type === "task") {
        const record = byKey.get(key);
        if (record) record.taskId = entry.task_id;
      }
    }
    return [...byKey.values()];
  }

  /** The latest staged result of each task, by task id. */
  async stagedResults(): Promise<Map<string, StagedEntry>> {
    const staged = new Map<string, StagedEntry>();
    for await (const entry of this.entries()) if (entry.type === "staged") staged.set(entry.task_id, entry);
    return staged;
  }

  /** The task ids submitted to this service with this profile, newest first, at most `limit`. */
  async recentTaskIds(scope: JournalScope, limit = Infinity): Promise<string[]> {
    const records = (await this.records()).filter((record) => inScope(record.submit, scope));
    const ids = records.flatMap((record) => (record.taskId ? [record.taskId] : [])).reverse();
    return [...new Set(ids)].slice(0, limit);
  }
}

/**
 * The submission in `records` that used `key` with this service and profile (entries
 * of older versions, without a base URL, never match). `records()` reads the whole
 * file: a caller looking up many keys reads it once and calls this for each.
 */
export function recordWithKey(records: readonly JournalRecord[], key: string, scope: JournalScope): JournalRecord | undefined {
  return records.find((record) => record.submit.idempotency_key === key && inScope(record.submit, scope));
}

/** The latest submission in `records` that created `taskId`; for many ids, read `records()` once. */
export function recordOfTask(records: readonly JournalRecord[], taskId: string): JournalRecord | undefined {
  return records.findLast((record) => record.taskId === taskId);
}

/** The scope of an entry as read; entries of versions that did not record it get one that matches no service. */
function scopeOf(entry: Partial<JournalScope>): JournalScope {
  return {
    base_url: typeof entry.base_url === "string" ? entry.base_url : "",
    profile: typeof entry.profile === "string" ? entry.profile : "",
  };
}

function inScope(entry: JournalScope, scope: JournalScope): boolean {
  return entry.base_url === scope.base_url && entry.profile === scope.profile;
}

/** What joins a task entry to its submit entry: the key within one scope. */
function recordKey(entry: SubmitEntry | TaskEntry): string {
  return JSON.stringify([entry.base_url, entry.profile, entry.idempotency_key]);
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
