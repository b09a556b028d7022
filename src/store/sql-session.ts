import type { ColumnValue, Scope } from "./store.js";

/** What a statement binds: arrays go as the dialect writes them (Dialect.numbers), JSON as its text. */
export type SqlParam = ColumnValue | boolean;

/**
 * A connection (or a transaction on one) as the parts shared by both engines use it:
 * statements written once, with `?` placeholders (PostgreSQL's engine numbers them), over
 * tables named without a schema (PostgreSQL's connections search `bulkcheck`).
 */
export interface SqlSession {
  readonly dialect: Dialect;
  rows(sql: string, params?: readonly SqlParam[]): Promise<ColumnValue[][]>;
  row(sql: string, params?: readonly SqlParam[]): Promise<ColumnValue[] | undefined>;
  /** Runs a statement and says how many rows it changed. */
  run(sql: string, params?: readonly SqlParam[]): Promise<number>;
  /**
   * Runs `work` in one transaction that takes the write lock (SQLite: IMMEDIATE; PostgreSQL:
   * row locks as statements take them), handing it the session of that transaction; inside
   * a transaction already, `work` is part of it.
   */
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** The store's id of a scope, added on first use. */
  scopeId(scope: Scope): Promise<number>;
}

/** What the two SQL dialects write differently, for statements otherwise written once. */
export interface Dialect {
  /** A column of JSON, selected as its text. */
  jsonText(this: void, column: string): string;
  /** A flag column, selected as 0 or 1. */
  flag(this: void, column: string): string;
  /** A text column as a CSV field: "" for NULL, quoted (quotes doubled) when it holds a quote, comma or line break. */
  csvField(this: void, column: string): string;
  /** A set of numbers bound as one parameter (see numbers), as a table whose column is `value`. */
  readonly numberTable: string;
  /** `column` is among the numbers bound as one parameter (see numbers). */
  inNumbers(this: void, column: string): string;
  /** Numbers as the one parameter of numberTable and inNumbers. */
  numbers(this: void, values: readonly number[]): SqlParam;
  /** A moment as a parameter: the stores' callers write "the beginning of time" as "". */
  instant(this: void, iso: string): SqlParam;
  /** LIMIT's parameter for no limit. */
  readonly noLimit: SqlParam;
  /** What locks the row a SELECT reads until the transaction ends (SQLite's transaction holds the write lock already). */
  readonly lockRow: string;
  /** The column that orders runs started at the same moment as they were added. */
  readonly runsAdded: string;
  /** Whether `error` is a unique constraint refusing a row. */
  isUniqueViolation(this: void, error: unknown): boolean;
  /** What a transaction that erases runs first, so that recordings take turns with it (see ERASURE_LOCK); none where transactions take turns already. */
  readonly lockErasures: string | undefined;
}

/** The store's scope ids, looked up (and added) once per scope and connection pool. */
export class ScopeIds {
  readonly #ids = new Map<string, number>();

  async of(scope: Scope, session: Pick<SqlSession, "row" | "run">): Promise<number> {
    const key = `${scope.baseUrl}\n${scope.profile}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      const select = "SELECT id FROM scopes WHERE base_url = ? AND profile = ?";
      let row = await session.row(select, [scope.baseUrl, scope.profile]);
      if (!row) {
        await session.run("INSERT INTO scopes (base_url, profile) VALUES (?, ?) ON CONFLICT DO NOTHING", [scope.baseUrl, scope.profile]);
        row = await session.row(select, [scope.baseUrl, scope.profile]);
      }
      id = Number(row![0]);
      this.#ids.set(key, id);
    }
    return id;
  }
}

/** `?, ?, …` for `count` values. */
export function questionMarks(count: number): string {
  return Array(count).fill("?").join(", ");
}

const NUMBERED = new Map<string, string>();

/** A statement written with `?` placeholders as PostgreSQL takes it: `$1, $2, …` (the shared statements have no `?` but placeholders). */
export function numbered(sql: string): string {
  let text = NUMBERED.get(sql);
  if (text === undefined) {
    let count = 0;
    text = sql.replace(/\?/g, () => `$${++count}`);
    NUMBERED.set(sql, text);
  }
  return text;
}
