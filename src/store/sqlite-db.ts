import { AsyncLocalStorage } from "node:async_hooks";
import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import Database from "libsql";
import { FileSystemError } from "../file-system-errors.js";
import { damageOf, StoreDamagedError, StoreTooNewError } from "./health.js";
import { latestVersion, pendingMigrations } from "./migrations/migration.js";
import { SQLITE_MIGRATIONS } from "./migrations/sqlite.js";

/** A value SQLite binds or returns. */
export type SqlValue = string | number | null | Buffer;

/**
 * How long a statement waits for another bulkcheck process to finish its write before
 * failing: recording a big result writes in batches of a fraction of a second each, and a
 * wait here blocks only this process.
 */
const BUSY_TIMEOUT_MS = 30_000;

/**
 * One SQLite database file through libsql (SQLite with prebuilt binaries in npm packages:
 * no compiler, no install script, Node 20 and later). Every statement is prepared once and
 * returns rows as arrays (`raw`): libsql's row objects carry a `_metadata` field of their
 * own, and a single `null` parameter outside an array is taken for named parameters, so
 * parameters always go in an array too.
 *
 * The file is written ahead (WAL) with every commit synced (`synchronous=FULL`): a run's
 * task written before its upload survives a power cut, not only a killed process.
 * `secure_delete` overwrites what is deleted, so erased numbers leave no bytes behind.
 */
export class SqliteDb {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  /** Savepoints named so far: each gets a name of its own. */
  #savepoints = 0;
  /** Set inside a unit of work (see unitOfWork). */
  readonly #unit = new AsyncLocalStorage<true>();
  /** Settles when the last unit of work begun has ended. */
  #units: Promise<void> = Promise.resolve();
  /** Whether a unit of work's transaction is open on the connection. */
  #unitOpen = false;

  private constructor(
    readonly path: string,
    db: Database.Database,
  ) {
    this.#db = db;
  }

  /**
   * Opens (creating) the database at `path`: the directory 0700, the file 0600 before
   * SQLite first writes it (its -wal and -shm files take the same mode), then migrates.
   *
   * Only a file that does not exist yet is opened outside SQLite: closing any descriptor of
   * a file drops every POSIX lock this process holds on it, so opening an existing store
   * that another connection of this process is using would silently release that
   * connection's lock. Another process closing the store would then think itself the last
   * user and remove the write-ahead log still in use here: a corrupt database.
   */
  static open(path: string): SqliteDb {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    chmodSync(dirname(path), 0o700);
    createEmptyFile(path);
    chmodSync(path, 0o600);
    const db = new SqliteDb(path, new Database(path, { timeout: BUSY_TIMEOUT_MS }));
    try {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // Turning a new file to WAL, and its first migration, can meet another process doing the
      // same at that moment (several commands started together on a fresh install), where SQLite
      // answers "database is locked" without waiting: tried again, up to the busy timeout.
      whileLocked(() => {
        if (String(db.row("PRAGMA journal_mode")![0]).toLowerCase() !== "wal") db.exec("PRAGMA journal_mode = WAL");
      });
      db.exec("PRAGMA synchronous = FULL");
      db.exec("PRAGMA secure_delete = ON");
      db.exec("PRAGMA foreign_keys = ON");
      whileLocked(() => db.migrate());
    } catch (error) {
      // A store refused (damaged, newer) is not held open: its connection would keep its locks.
      db.#db.close();
      throw error;
    }
    return db;
  }

  /**
   * Opens the database at `path` as it is, for a look: no mode changed, nothing migrated,
   * and nothing but the busy timeout set (`:memory:` is a database of its own). SQLite
   * creates a file that is not there: the caller makes sure it is.
   */
  static inspect(path: string): SqliteDb {
    const db = new SqliteDb(path, new Database(path, { timeout: BUSY_TIMEOUT_MS }));
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    return db;
  }

  exec(sql: string): void {
    this.#checked(() => this.#db.exec(sql));
  }

  run(sql: string, params: readonly SqlValue[] = []): { changes: number; lastInsertRowid: number } {
    // Outside a transaction a write that SQLite refuses at once as locked (rather than waiting) is simply tried again.
    const write = () => this.#checked(() => this.#statement(sql).run([...params]));
    let result: ReturnType<typeof write> | undefined;
    if (this.#db.inTransaction) result = write();
    else whileLocked(() => void (result = write()));
    return { changes: result!.changes, lastInsertRowid: Number(result!.lastInsertRowid) };
  }

  row(sql: string, params: readonly SqlValue[] = []): SqlValue[] | undefined {
    return this.#checked(() => this.#statement(sql).get([...params]) as SqlValue[] | undefined);
  }

  rows(sql: string, params: readonly SqlValue[] = []): SqlValue[][] {
    return this.#checked(() => this.#statement(sql).all([...params]) as SqlValue[][]);
  }

  /**
   * Runs `work` in one transaction that takes the write lock at once (IMMEDIATE), so two
   * processes reading then writing the same rows cannot both decide on what they read.
   * Inside a transaction already, `work` is a savepoint of it: undone alone when it throws.
   */
  transaction<T>(work: () => T): T {
    if (this.#db.inTransaction) return this.#savepoint(work);
    whileLocked(() => this.exec("BEGIN IMMEDIATE"));
    return this.#committed(work);
  }

  /**
   * transaction() for asynchronous work (a unit of work of the store's parts, see
   * Store.transaction). Units of work take turns: the connection holds one transaction, so
   * a unit begun elsewhere in the process waits for the one under way, while a unit begun
   * inside it (a part's own transaction) is a savepoint of it. What the process does outside
   * any unit meanwhile waits for it too (see outsideUnits), so a unit holds its own writes
   * only, as a transaction on a connection of its own would.
   */
  async unitOfWork<T>(work: () => Promise<T>): Promise<T> {
    if (this.#unit.getStore()) return this.#asyncSavepoint(work);
    const before = this.#units;
    let done!: () => void;
    this.#units = new Promise<void>((resolve) => (done = resolve));
    try {
      await before;
      return await this.#unit.run(true, async () => {
        whileLocked(() => this.exec("BEGIN IMMEDIATE"));
        this.#unitOpen = true;
        try {
          const value = await work();
          this.exec("COMMIT");
          return value;
        } catch (error) {
          if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
          throw error;
        } finally {
          this.#unitOpen = false;
        }
      });
    } finally {
      done();
    }
  }

  /**
   * Runs `work` (statements of the store's parts) now inside a unit of work, or, outside any,
   * once no unit's transaction is open: the one connection would otherwise make it part of
   * that transaction, committed or undone with it.
   */
  async outsideUnits<T>(work: () => T): Promise<T> {
    if (!this.inUnit) while (this.#unitOpen) await this.#units;
    return work();
  }

  /** Whether the caller runs inside a unit of work. */
  get inUnit(): boolean {
    return this.#unit.getStore() === true;
  }

  async #asyncSavepoint<T>(work: () => Promise<T>): Promise<T> {
    const name = `unit_${++this.#savepoints}`;
    this.exec(`SAVEPOINT ${name}`);
    try {
      const value = await work();
      this.exec(`RELEASE ${name}`);
      return value;
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw error;
    }
  }

  /** Runs `work` in the transaction just begun: committed when it returns, rolled back when it throws. */
  #committed<T>(work: () => T): T {
    try {
      const value = work();
      this.exec("COMMIT");
      return value;
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Runs `work` as a savepoint of the transaction under way. */
  #savepoint<T>(work: () => T): T {
    const name = `part_${++this.#savepoints}`;
    this.exec(`SAVEPOINT ${name}`);
    try {
      const value = work();
      this.exec(`RELEASE ${name}`);
      return value;
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw error;
    }
  }

  /** Moves everything written ahead into the file and empties the write-ahead log (what erasure needs). */
  checkpoint(): void {
    this.row("PRAGMA wal_checkpoint(TRUNCATE)");
  }

  /**
   * Writes a consistent copy of the database into `into`, a file that is empty or not there
   * (VACUUM INTO): one read transaction, so other connections go on writing meanwhile and the
   * copy holds what was committed when it began, compacted, its schema version included.
   * SQLite does not sync the copy: the caller does. A full disk is the copy's, named so.
   */
  backup(into: string): void {
    try {
      this.#checked(() => this.#db.prepare("VACUUM INTO ?").run([into]));
    } catch (error) {
      if (!(error instanceof FileSystemError)) throw error;
      throw new FileSystemError(into, error.systemCode, true, { cause: error.cause });
    }
  }

  /**
   * Closes the connection. The last one checkpoints the write-ahead log into the file, and may
   * find the file damaged then: that is for the next statement that meets the damage to
   * report, not thrown from here, where it would hide the command's own outcome.
   */
  close(): void {
    this.#statements.clear();
    try {
      this.#db.close();
    } catch (error) {
      if (damageOf(error) === undefined) throw error;
    }
  }

  /**
   * A full disk (or the quota, or the temporary space SQLite sorts and stages in) is the
   * user's to fix: exit 3 naming the store, not an unexpected error. The transaction it
   * met is rolled back; everything committed before stays. So is a damaged file (exit 3,
   * naming it, with what to do): whichever statement first meets the damage.
   */
  #checked<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      const damage = damageOf(error);
      if (damage !== undefined) throw new StoreDamagedError(this.path, damage, { cause: error });
      if ((error as { code?: unknown } | undefined)?.code !== "SQLITE_FULL") throw error;
      throw new FileSystemError(this.path, "ENOSPC", false, {
        cause: error,
        hint: "Free some space on its disk and in the temporary directory ($TMPDIR), then run the same command again: nothing recorded is lost.",
      });
    }
  }

  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      if (statement.reader) statement.raw(true);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs the migrations this file has not had yet, each in its own transaction. A file
   * migrated by a newer bulkcheck is refused, not written with an older idea of its tables.
   */
  private migrate(): void {
    // Most opens find nothing to do: seen without a lock, so a store another process is writing opens at once.
    const latest = latestVersion(SQLITE_MIGRATIONS);
    if (this.schemaVersion === latest) return;
    for (;;) {
      const applied = this.transaction(() => {
        const version = Number(this.row("PRAGMA user_version")![0]);
        if (version > latest) throw new StoreTooNewError(this.path, version, latest);
        const [next] = pendingMigrations(SQLITE_MIGRATIONS, version);
        if (next === undefined) return false;
        this.exec(next.statements);
        this.exec(`PRAGMA user_version = ${next.version}`);
        return true;
      });
      if (!applied) return;
    }
  }

  /** The schema version: the last migration run. */
  get schemaVersion(): number {
    return Number(this.row("PRAGMA user_version")![0]);
  }
}

/** Creates `path` empty and private unless it exists (see SqliteDb.open for why an existing file is left unopened). */
function createEmptyFile(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/** Runs `work` again while SQLite says the database is locked, pausing a moment each time, for at most the busy timeout. */
function whileLocked(work: () => void): void {
  const giveUpAt = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      work();
      return;
    } catch (error) {
      if (!isLocked(error) || Date.now() > giveUpAt) throw error;
      // Opening is synchronous (the constructor of a store): a short blocking pause, not a busy loop.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 80);
    }
  }
}

function isLocked(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (typeof code === "string" && code.startsWith("SQLITE_BUSY")) || (typeof message === "string" && /database is locked/i.test(message))
  );
}
