/**
 * What bulkcheck remembers, in three parts with an interface each: runs with their leases
 * (what one `submit` does, until its output exists), their tasks (each part uploaded, with
 * its idempotency key written before the first attempt, and its numbers), and the result
 * ledger (every result row downloaded, with when its task finished). A caller groups
 * writes of several parts in one transaction (Store.transaction). SQLite in the state
 * directory by default; a team's PostgreSQL implements the same interfaces. Every
 * operation is batched: no caller makes a round trip per number.
 */

// Shared with the layers below (a transfer is not started again for it): see errors.ts.
export { StoreUnavailableError } from "../errors.js";

/** A value as a store's row holds it. */
export type ColumnValue = string | number | null | Buffer;

/** Which service and account a record belongs to: a task id or a result means something only to the service it came from. */
export interface Scope {
  /** The service's base URL as the client addresses it, without a trailing slash. */
  baseUrl: string;
  profile: string;
}

/**
 * Where a run stands: carried on while open; finished when its output is written; abandoned
 * (its list changed) or failed (it cannot finish: its output could not be written, a task
 * failed), the reason in its note.
 */
export const RUN_STATES = ["open", "finished", "abandoned", "failed"] as const;
export type RunState = (typeof RUN_STATES)[number];

/** How a run came to be: a submit, a retry-failed, or a submission imported from the journal of version 0.1. */
export type RunKind = "submit" | "retry" | "legacy";

/** The source list as the run read it. */
export interface RunSource {
  /** Absolute path; absent for stdin. */
  path?: string;
  size?: number;
  mtimeMs?: number;
  /** sha256 of the file's (or stdin's) bytes. */
  sha256?: string;
}

/** Who holds a run while it is worked on: one process on one machine. */
export interface Lease {
  host: string;
  pid: number;
  /** Tells two processes with the same pid apart (containers, pid reuse). */
  nonce: string;
}

export interface RunRecord {
  id: string;
  scope: Scope;
  /** What makes two commands "the same command" (see runIdentity): an open run with it is continued, not started again. */
  identity: string;
  kind: RunKind;
  state: RunState;
  startedAt: string;
  finishedAt?: string;
  product: string;
  /** An ISO 3166-1 code, `auto` (one task per country), or absent (carrier_batch without --country). */
  country?: string;
  source: RunSource;
  /** How the list was read and classified (PreparationSettings), so joins and retries read it the same way. */
  settings: unknown;
  /** The preparation summary (PrepareSummary) of the whole list. */
  prepared?: unknown;
  /** What the run decided before its first upload (RunPlan): journalled, never recomputed. Read with run/run-record.ts. */
  plan?: unknown;
  /** Where its output went: path, format, join. Read with run/run-record.ts. */
  output?: unknown;
  /** The machine and OS user that started it. */
  host?: string;
  user?: string;
  lease?: Lease & { heartbeatAt: string };
  /** Why it was abandoned, or other notes for `runs show`. */
  note?: string;
}

/** Which runs RunStore.list lists; each field left out lets every run through. */
export interface RunFilter {
  scope?: Scope;
  state?: RunState;
  /** Only runs started at or after this ISO time. */
  since?: string;
  /** At most this many, the newest. */
  limit?: number;
}

export type NewRun = Omit<RunRecord, "lease" | "finishedAt">;

export interface RunPatch {
  /** A run of 0.1 adopted by the command that continues it takes that command's identity. */
  identity?: string;
  state?: RunState;
  finishedAt?: string;
  plan?: unknown;
  output?: unknown;
  source?: RunSource;
  prepared?: unknown;
  note?: string;
}

/** One task: a part of a run (or a retry) written before its upload, or a task met only by downloading it. */
export interface TaskRecord {
  /** The store's own reference, by which ledger rows name their task. */
  ref: number;
  scope: Scope;
  runId?: string;
  /** 0-based part of its run, and how many parts the run has. */
  part?: number;
  parts?: number;
  idempotencyKey?: string;
  /** The service's task id, once known. */
  taskId?: string;
  product: string;
  country?: string;
  /** Numbers uploaded, and the sha256 of the uploaded bytes. */
  count?: number;
  sha256?: string;
  /** When the key was written, before the first upload attempt. */
  submittedAt?: string;
  /** The service's created_at. */
  createdAt?: string;
  status?: string;
  total?: number;
  successCnt?: number;
  failureCnt?: number;
  /** When a check first saw the task succeeded: the results' date in the ledger. */
  checkedAt?: string;
  /** For a retry: the task whose numbers without a result it holds. */
  retryOf?: string;
  /** Whether the service returned a task this key had already created. */
  replayed?: boolean;
  /** When its result rows were written to the ledger (all of them, in one go). */
  recordedAt?: string;
  /** Its result file, fetched as the task finished and kept until the run's output is written. */
  staged?: { file: string; bytes: number; sha256: string };
}

export type NewTask = Omit<TaskRecord, "ref">;

export type TaskPatch = Partial<
  Pick<
    TaskRecord,
    | "taskId"
    | "createdAt"
    | "status"
    | "total"
    | "successCnt"
    | "failureCnt"
    | "checkedAt"
    | "replayed"
    | "recordedAt"
    | "staged"
    | "country"
  >
>;

/** A stored result with where it came from. */
export interface LedgerRow {
  identifier: string;
  product: string;
  scope: Scope;
  taskId?: string;
  checkedAt: string;
  /** Column name → value, the product's columns and any the service added. */
  values: Record<string, string>;
}

/** A stored result of a number: the identifier and the task whose result it is. */
export interface StoredResult {
  identifier: number;
  taskRef: number;
}

export interface LedgerStats {
  results: number;
  numbers: number;
  tasks: number;
  oldest?: string;
  newest?: string;
  /** Per product and scope. */
  groups: Array<{ scope: Scope; product: string; results: number; numbers: number; oldest: string; newest: string }>;
  /** Bytes on disk (or in the database) the store takes. */
  bytes?: number;
}

export interface LedgerFilter {
  scope?: Scope;
  product?: string;
  /** Only results checked at or after this ISO time. */
  since?: string;
}

export interface ErasureOptions {
  /** Count what would be erased, and erase nothing. */
  dryRun?: boolean;
}

/** What an erasure did. */
export interface Erasure {
  /** Results erased (with dryRun: that would be). */
  results: number;
  /**
   * Numbers remembered (hashed, see erasures.ts) because runs open now could bring them back:
   * their tasks never record those numbers' results, nor write them to an output. 0 without
   * such a run (and for prune and dryRun).
   */
  remembered?: number;
  /** Why their bytes may stay in the store's files for now, when the engine did not clear them (the database's own words). */
  uncleared?: string;
}

/** One forget as remembered (see Ledger.erasures): its numbers only as HMAC-SHA-256 hashes under its own key. */
export interface RememberedErasure {
  erasedAt: string;
  /** The product it was limited to; undefined: every product. */
  product?: string;
  hashKey: string;
  hashes: string[];
}

/** Numbers erased since a task was given its numbers (see Ledger.erasedSince): tells whether a number is one of them. */
export interface ErasedIdentifiers {
  /** `identifier`: a number's digits with the country code, as an integer. */
  has(identifier: number): boolean;
}

/** Tasks of one product not yet seen finished: see TaskStore.unfinished. */
export interface UnfinishedTasks {
  product: string;
  tasks: number;
  numbers: number;
}

/** Runs and their leases: what one `submit` does, until its output exists, and who works on it. */
export interface RunStore {
  /** The open run of a command in a scope, if any. */
  open(scope: Scope, identity: string): Promise<RunRecord | undefined>;
  /** Records a new open run; "exists" when another process opened a run of the same command meanwhile. */
  create(run: NewRun, lease: Lease): Promise<RunRecord | "exists">;
  /**
   * Takes the lease of a run for `lease`, unless a live holder has it: one whose heartbeat
   * is newer than `staleBefore` and that `isAlive` does not declare dead. Returns the
   * holder when it could not be taken.
   */
  claim(runId: string, lease: Lease, now: string, staleBefore: string, isAlive: (holder: Lease) => boolean): Promise<Lease | undefined>;
  heartbeat(runId: string, lease: Lease, now: string): Promise<void>;
  release(runId: string, lease: Lease): Promise<void>;
  update(runId: string, patch: RunPatch): Promise<void>;
  /** Removes a run that never made its plan nor has a task: it stopped before it claimed or uploaded anything, and leaves no trace. */
  discard(runId: string): Promise<void>;
  /** A run by its id, or by a prefix that names only one. */
  get(idOrPrefix: string): Promise<RunRecord | undefined>;
  /** Runs newest first, those the filter lets through. */
  list(filter: RunFilter): Promise<RunRecord[]>;
  /**
   * Adds a run another store recorded, as it was there (its state, dates and lease);
   * false when a run with its id is here already (see import.ts).
   */
  copy(run: RunRecord): Promise<boolean>;
}

/** Tasks: each part uploaded (its idempotency key written before the first attempt), and the numbers it was given. */
export interface TaskStore {
  add(task: NewTask): Promise<TaskRecord>;
  update(ref: number, patch: TaskPatch): Promise<void>;
  ofRun(runId: string): Promise<TaskRecord[]>;
  /** The latest record of a service task id in a scope. */
  byId(scope: Scope, taskId: string): Promise<TaskRecord | undefined>;
  /** The task of an idempotency key in a scope. */
  withKey(scope: Scope, key: string): Promise<TaskRecord | undefined>;
  /** Tasks with a service id, newest first. */
  recent(scope: Scope, limit: number): Promise<TaskRecord[]>;
  /** Every task in every scope, in the order they were added: at most `limit` of those after the reference `afterRef`. */
  after(afterRef: number, limit: number): Promise<TaskRecord[]>;
  /** Marks a task's upload as under way (`at`), or no longer (undefined) when it failed without a task. */
  markUploading(ref: number, at: string | undefined): Promise<void>;
  /**
   * What the account has going on, as far as the store knows (every machine sharing it):
   * uploads under way that began at or after `since` (older ones are taken for dead), and
   * tasks created and not yet seen finished. The scheduler keeps both within the service's
   * limits across machines.
   */
  activity(scope: Scope, since: string): Promise<{ uploading: number; unfinished: number }>;
  /**
   * The tasks of a scope created and not yet seen finished, per product: how many, and the
   * numbers uploaded in them (the service's `total` where the count was not recorded).
   * What the service holds reserved for them, as far as this store knows (`balance`).
   */
  unfinished(scope: Scope): Promise<UnfinishedTasks[]>;
  /** Every task the service was given, of every scope, and those of them this store has not seen finish (`store status`). */
  counts(): Promise<{ submitted: number; unfinished: number }>;
  /**
   * Writes the numbers a task is given, all at once, before its upload (a run carried on
   * writes them again: a task that has numbers keeps them). They tell a later run which
   * numbers are in flight, and once the result is recorded, which ones the service answered
   * without a result.
   */
  addNumbers(taskRef: number, identifiers: ArrayLike<number>): Promise<void>;
  /** The numbers a task was given (see addNumbers), in batches. */
  numbers(taskRef: number): AsyncIterable<readonly number[]>;
  /**
   * The tasks of a product in a scope, up to the reference `maxTaskRef`, whose numbers may
   * count as checked: those the service created (a task id), those with a recorded result,
   * and the claims of open runs (parts written, not yet answered with a task id). Which of
   * them do is decided above the engines (see ledger/reuse.ts).
   */
  answering(scope: Scope, product: string, maxTaskRef: number): Promise<TaskRecord[]>;
  /** When each of these tasks was first seen succeeded (tasks not yet seen so are left out). */
  checkedAt(taskRefs: readonly number[]): Promise<Map<number, string>>;
  /** The largest task reference so far (a run's plan records it, so the same results are reused when it continues). */
  maxRef(): Promise<number>;
  /** Whether a task of `product` in `scope` (a claim or a task) was added after the reference `afterRef`. */
  addedAfter(scope: Scope, product: string, afterRef: number): Promise<boolean>;
}

/** A value column, or NULL for a column the task's result does not have. */
export type StoredValue = string | null;

/**
 * A task's result rows in the ledger's key order (ascending numbers), each as its number and
 * its stored values (see splitValues): what Ledger.record inserts.
 */
export interface KeyOrderedResults {
  /** The result's columns after `identifier`. */
  readonly columns: readonly string[];
  readonly size: number;
  identifierAt(position: number): number;
  /** The stored values of the `position`th row; rows with the same values should hand out the same array, which SQLite's recording writes once. */
  valuesAt(position: number): readonly StoredValue[];
}

/** The result ledger: every result row downloaded, counted from when its task is marked recorded. */
export interface Ledger {
  /**
   * Records a task's result: its rows in number order (`rows.columns` after `identifier`), the
   * numbers forgotten since the task was given them left out (see erasedSince), then the task
   * marked recorded, from `at` on: its rows count only from then. The only way results enter
   * the ledger (a download's recording worker and `store import` both come here). A recording
   * cut short at any moment leaves the task unrecorded, and one done again keeps the rows
   * already there, never doubling one. It commits its own transactions: not to be called
   * inside a unit of work.
   */
  record(taskRef: number, rows: KeyOrderedResults, at: string): Promise<void>;
  /**
   * Every recorded result of a product in a scope (from tasks up to `maxTaskRef`, when
   * given), newest first, one row per result: the first row of a number is its latest.
   * Which are fresh enough to reuse is the reuse rule's to say (ledger/reuse.ts).
   */
  latest(scope: Scope, product: string, maxTaskRef?: number): AsyncIterable<readonly StoredResult[]>;
  /** The rows of one task's result, in batches; `identifiers` keeps only those. */
  ofTask(taskRef: number, identifiers?: ReadonlySet<number>): AsyncIterable<readonly LedgerRow[]>;
  /**
   * A task's result as CSV text, as a result file holds it: `header` (`identifier` and the
   * task's columns), then `lines`, a line per row in number order with each value quoted
   * where CSV needs it, in pieces the database writes (no object per row). Undefined when a
   * row keeps a value in `extra` (a column of the service's own, or a value with a NUL):
   * read that task with ofTask.
   */
  csvOfTask(taskRef: number): Promise<{ header: string; lines: AsyncIterable<string> } | undefined>;
  /** Every stored result of these numbers, newest first. */
  lookup(identifiers: readonly string[], filter?: LedgerFilter): Promise<LedgerRow[]>;
  /**
   * For each result of `taskRef`, the latest earlier result of the same number (same product
   * and scope), for the numbers that had one.
   */
  previous(taskRef: number): AsyncIterable<ReadonlyArray<{ current: LedgerRow; previous: LedgerRow }>>;
  /**
   * Erases every result of these numbers (of `product` only, when given), recorded or still
   * being recorded, and clears them out of the store's files as far as the engine allows
   * (see docs/files-and-security.md). While a run that may still record results is open, the
   * numbers are also remembered, hashed, for the tasks there are now (see erasedSince): in the
   * same transaction as the rows are deleted, so a recording either ends before (and its rows
   * are deleted) or leaves them out. With `dryRun`, only counts them.
   */
  forget(identifiers: readonly string[], options?: ErasureOptions & { product?: string }): Promise<Erasure>;
  /**
   * The numbers forgotten since task `taskRef` was given its numbers (of its product), while a
   * run that was open then may still bring them back: its result's rows of them are neither
   * recorded nor written. Undefined when there are none.
   */
  erasedSince(taskRef: number): Promise<ErasedIdentifiers | undefined>;
  /** Drops what forget remembered once no run open at it is still open (nor abandoned with a result to collect); returns how many forgets. */
  dropSpentErasures(): Promise<number>;
  /** What forget remembers now (see erasedSince), each forget with its numbers' hashes: what `store import` carries over. */
  erasures(): Promise<RememberedErasure[]>;
  /**
   * Remembers a forget made in another store (see import.ts) for every task this store has now,
   * unless it remembers it already (the same key). Returns whether it was added.
   */
  rememberErasure(erasure: RememberedErasure): Promise<boolean>;
  /** Removes results checked before `before` as forget does. With `dryRun`, only counts them. */
  prune(before: string, options?: ErasureOptions): Promise<Erasure>;
  /** Erases the results of these tasks as forget does (a store whose results were copied into another: see import.ts). */
  forgetTasks(taskRefs: readonly number[]): Promise<Erasure>;
  stats(): Promise<LedgerStats>;
  /** Every recorded result the filter lets through, task by task, oldest first. */
  export(filter: LedgerFilter): AsyncIterable<readonly LedgerRow[]>;
}

/** The three parts of a store, as a unit of work sees them. */
export interface StoreParts {
  readonly runs: RunStore;
  readonly tasks: TaskStore;
  readonly ledger: Ledger;
}

export interface Store extends StoreParts {
  /** "sqlite" or "postgres", and where it is (a path, or the URL without its password). */
  readonly kind: "sqlite" | "postgres";
  readonly location: string;
  /**
   * Runs `work` as one transaction: the writes it makes through `parts` are committed
   * together when it returns, or none of them when it throws; nothing else the process or
   * another one writes meanwhile is part of it, on either engine (SQLite's one connection
   * makes the process's other store operations wait for it; PostgreSQL's run on other
   * connections). Units of work take turns on the rows they write. Ledger.record is no part
   * of one: it commits on its own.
   */
  transaction<T>(work: (parts: StoreParts) => Promise<T>): Promise<T>;
  /**
   * Runs `work` as one transaction that no other claim of `product` in `scope` overlaps: by
   * any process, on any machine sharing the store, whatever the moment they started. What a
   * run decides to upload and its claim on those numbers (its parts' rows and numbers) are
   * made inside it, so two runs never both decide on the same unclaimed numbers (see
   * run/claims.ts). SQLite: the write lock; PostgreSQL: a transaction-scoped advisory lock.
   */
  claim<T>(scope: Scope, product: string, work: (parts: StoreParts) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
