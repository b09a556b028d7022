/**
 * Whether a store can be trusted: a damaged file or a schema from a newer bulkcheck is
 * refused with what to do (never read as if sound, never "a bulkcheck bug"), and `store
 * check` reports what is wrong in the same words.
 */

import { BulkcheckError, UsageError, type ErrorDetails } from "../errors.js";

/** What to do with a damaged SQLite store: put a backup in its place (see the documentation for what that means for open runs). */
export const RESTORE_HINT =
  "Stop every bulkcheck using it, move it and its -wal and -shm files aside, and copy your last backup (bulkcheck store backup FILE) " +
  "in its place, or let bulkcheck start an empty store there; runs still open in the damaged store are then unknown: " +
  'see "Restoring the store" in docs/files-and-security.md.';

/**
 * The store is damaged: an SQLite file truncated or overwritten ("file is not a database",
 * "database disk image is malformed"), or a schema that lacks what bulkcheck needs. Exit 3,
 * naming it, with what to do; nothing more is written to it.
 */
export class StoreDamagedError extends BulkcheckError {
  constructor(
    readonly location: string,
    /** What is wrong ("file is not a database"). */
    readonly problem: string,
    details: ErrorDetails = {},
  ) {
    super("input", `The store ${location} is damaged: ${problem}.`, {
      hint: `See what is wrong with: bulkcheck store check. ${RESTORE_HINT}`,
      ...details,
    });
  }
}

/**
 * The store's schema was migrated by a newer bulkcheck: refused before anything is read or
 * sent, never written with an older idea of its tables. Both engines throw this one error.
 */
export class StoreTooNewError extends UsageError {
  constructor(location: string, version: number, latest: number) {
    super(`The store at ${location} has schema version ${version}, newer than this bulkcheck knows (${latest}).`, {
      hint: "Upgrade bulkcheck on this machine to the version that last used the store (for a team's store, the one the rest of the team uses).",
    });
  }
}

/** SQLite's codes of a damaged file: its header is not a database's, or a page is not what the file says it is. */
export function damageOf(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== "string" || !(code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT"))) return undefined;
  return typeof message === "string" ? message : code;
}

/** What `store check` found: an empty `problems` is a sound store. */
export interface StoreCheck {
  kind: "sqlite" | "postgres";
  /** The file's path, or the URL without its password. */
  location: string;
  /** How many migrations it has run; absent when the file is too damaged to say. */
  schemaVersion?: number;
  problems: string[];
}

/** A schema as the check compares it: each table's columns, with their declared types. */
export type SchemaShape = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** Builds a SchemaShape from (table, column, type) rows. */
export function schemaShape(rows: ReadonlyArray<readonly [table: string, column: string, type: string]>): SchemaShape {
  const tables = new Map<string, Map<string, string>>();
  for (const [table, column, type] of rows) {
    let columns = tables.get(table);
    if (!columns) tables.set(table, (columns = new Map<string, string>()));
    columns.set(column, type);
  }
  return tables;
}

/**
 * What `actual` lacks of `expected` (the schema its migrations make): a missing table or
 * column, or a column of another type. What it has besides is no problem of bulkcheck's.
 */
export function schemaProblems(expected: SchemaShape, actual: SchemaShape): string[] {
  const problems: string[] = [];
  for (const [table, columns] of expected) {
    const found = actual.get(table);
    if (!found) {
      problems.push(`the table ${table} is missing`);
      continue;
    }
    for (const [column, type] of columns) {
      const foundType = found.get(column);
      if (foundType === undefined) problems.push(`the column ${table}.${column} is missing`);
      else if (foundType.toLowerCase() !== type.toLowerCase()) problems.push(`the column ${table}.${column} is ${foundType}, not ${type}`);
    }
  }
  return problems;
}

/** A run's record holds what bulkcheck cannot read: exit 3, naming the run and the field. */
export class RunRecordError extends BulkcheckError {
  constructor(runId: string, field: string, problem: string) {
    super("input", `Run ${runId}'s ${field} in the store cannot be read: ${problem}.`, {
      hint: "bulkcheck wrote it otherwise: a record changed outside bulkcheck can be put back from a backup of the store. See what else is wrong with: bulkcheck store check",
    });
  }
}
