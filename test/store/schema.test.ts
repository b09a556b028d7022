import { join } from "node:path";
import Database from "libsql";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";

/** A table as both engines can describe it: what a row may hold and how it is found, not how each engine stores it. */
interface LogicalTable {
  /** Column → normalised type and whether it may be NULL. */
  columns: Record<string, string>;
  primaryKey: string[];
  unique: string[];
  foreignKeys: string[];
  /** Index name → its columns, and whether it is unique or partial. */
  indexes: Record<string, string>;
}
type LogicalSchema = Record<string, LogicalTable>;

/**
 * Types as they mean the same in both: SQLite keeps times and JSON as text and flags as
 * integers, where PostgreSQL has timestamptz, json and boolean; bytes are SQLite's blob.
 */
function normalisedType(type: string): string {
  const lower = type.toLowerCase();
  if (["integer", "bigint", "boolean"].includes(lower)) return "integer";
  if (["text", "timestamp with time zone", "json"].includes(lower)) return "text";
  if (lower === "bytea") return "blob";
  return lower;
}

/**
 * What the engines keep differently on purpose, each with its reason; anything else that
 * differs is a migration written for one engine and not the other.
 */
const KNOWN_DIFFERENCES = {
  /** Created by the embedded store's first migration and never used (kept: dropping it would change its version). */
  sqliteOnlyTables: ["meta"],
  /** PostgreSQL's stand-in for SQLite's rowid: the order runs started at the same moment were added in. */
  postgresOnlyColumns: ["runs.seq"],
  /** PostgreSQL orders runs by seq where SQLite uses the rowid every index carries. */
  indexes: { "runs.runs_started": { sqlite: "started_at", postgres: "started_at, seq" } },
  /** PostgreSQL checks a foreign key with a trigger per row, which made recording ~3× slower: left out there (see migrations/postgres.ts). */
  sqliteOnlyForeignKeys: ["results: task_ref -> tasks(ref)", "task_number_chunks: task_ref -> tasks(ref)"],
};

function withoutKnownDifferences(schema: LogicalSchema, engine: "sqlite" | "postgres"): LogicalSchema {
  const copy = structuredClone(schema);
  if (engine === "sqlite") for (const table of KNOWN_DIFFERENCES.sqliteOnlyTables) delete copy[table];
  if (engine === "postgres") {
    for (const column of KNOWN_DIFFERENCES.postgresOnlyColumns) {
      const [table, name] = column.split(".") as [string, string];
      delete copy[table]!.columns[name];
    }
  }
  for (const [index, columns] of Object.entries(KNOWN_DIFFERENCES.indexes)) {
    const [table, name] = index.split(".") as [string, string];
    expect(copy[table]!.indexes[name]).toMatch(new RegExp(`^\\(${columns[engine]}\\)`));
    copy[table]!.indexes[name] = copy[table]!.indexes[name]!.replace(columns[engine], "…");
  }
  if (engine === "sqlite") {
    for (const key of KNOWN_DIFFERENCES.sqliteOnlyForeignKeys) {
      const [table, foreignKey] = key.split(": ") as [string, string];
      expect(copy[table]!.foreignKeys).toContain(foreignKey);
      copy[table]!.foreignKeys = copy[table]!.foreignKeys.filter((found) => found !== foreignKey);
    }
  }
  return copy;
}

function indexText(columns: readonly string[], unique: boolean, partial: boolean): string {
  return `(${columns.join(", ")})${unique ? " unique" : ""}${partial ? " partial" : ""}`;
}

/** The logical schema of an SQLite file, from its pragmas. */
function sqliteSchema(path: string): LogicalSchema {
  const db = new Database(path, { readonly: true });
  try {
    const all = <T>(sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as T[];
    const schema: LogicalSchema = {};
    for (const { name } of all<{ name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")) {
      const info = all<{ name: string; type: string; notnull: number; pk: number }>(`PRAGMA table_info(${name})`);
      const table: LogicalTable = { columns: {}, primaryKey: [], unique: [], foreignKeys: [], indexes: {} };
      for (const column of info)
        table.columns[column.name] = `${normalisedType(column.type)}${column.notnull || column.pk ? " not null" : ""}`;
      table.primaryKey = info
        .filter((column) => column.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name);
      for (const index of all<{ name: string; unique: number; origin: string; partial: number }>(`PRAGMA index_list(${name})`)) {
        const columns = all<{ name: string; seqno: number }>(`PRAGMA index_info(${index.name})`)
          .sort((a, b) => a.seqno - b.seqno)
          .map((column) => column.name);
        if (index.origin === "u") table.unique.push(columns.join(", "));
        if (index.origin === "c") table.indexes[index.name] = indexText(columns, index.unique === 1, index.partial === 1);
      }
      table.foreignKeys = all<{ table: string; from: string; to: string }>(`PRAGMA foreign_key_list(${name})`).map(
        (key) => `${key.from} -> ${key.table}(${key.to})`,
      );
      schema[name] = table;
    }
    return schema;
  } finally {
    db.close();
  }
}

/** The logical schema of PostgreSQL's `bulkcheck` schema (its schema_version bookkeeping left out), from its catalogs. */
async function postgresSchema(url: string): Promise<LogicalSchema> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const query = async <T extends object>(text: string) => (await client.query<T>(text)).rows;
    const schema: LogicalSchema = {};
    const columns = await query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = 'bulkcheck' AND table_name <> 'schema_version' ORDER BY table_name, ordinal_position`,
    );
    for (const column of columns) {
      schema[column.table_name] ??= { columns: {}, primaryKey: [], unique: [], foreignKeys: [], indexes: {} };
      schema[column.table_name]!.columns[column.column_name] =
        `${normalisedType(column.data_type)}${column.is_nullable === "NO" ? " not null" : ""}`;
    }
    const constraints = await query<{
      table: string;
      type: string;
      columns: string[];
      target: string | null;
      target_columns: string[] | null;
    }>(
      `SELECT c.conrelid::regclass::text AS table, c.contype AS type,
              array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS columns,
              c.confrelid::regclass::text AS target,
              array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS target_columns
       FROM pg_constraint c WHERE c.connamespace = 'bulkcheck'::regnamespace AND c.contype IN ('p', 'u', 'f')`,
    );
    for (const constraint of constraints) {
      const table = schema[constraint.table.replace(/^bulkcheck\./, "")];
      if (!table) continue;
      if (constraint.type === "p") table.primaryKey = constraint.columns;
      if (constraint.type === "u") table.unique.push(constraint.columns.join(", "));
      if (constraint.type === "f") {
        table.foreignKeys.push(
          `${constraint.columns.join(", ")} -> ${constraint.target!.replace(/^bulkcheck\./, "")}(${constraint.target_columns!.join(", ")})`,
        );
      }
    }
    const indexes = await query<{ table: string; name: string; unique: boolean; partial: boolean; columns: string[] }>(
      `SELECT t.relname AS table, i.relname AS name, x.indisunique AS unique, x.indpred IS NOT NULL AS partial,
              array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS columns
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
       WHERE t.relnamespace = 'bulkcheck'::regnamespace AND t.relname <> 'schema_version'
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
    );
    for (const index of indexes) schema[index.table]!.indexes[index.name] = indexText(index.columns, index.unique, index.partial);
    return schema;
  } finally {
    await client.end();
  }
}

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

describe("the migrations of both engines", () => {
  it("end, from an empty store, at the same tables, columns, keys and indexes (but for the differences each engine keeps on purpose)", async () => {
    const path = join(tempDir(), "bulkcheck.db");
    opened.push(SqliteStore.open(path));
    const url = await createTestDatabase();
    opened.push(await PostgresStore.open(url, {}));
    const sqlite = withoutKnownDifferences(sqliteSchema(path), "sqlite");
    const postgres = withoutKnownDifferences(await postgresSchema(url), "postgres");
    expect(Object.keys(sqlite).sort()).toEqual(["erased_numbers", "erasures", "results", "runs", "scopes", "task_number_chunks", "tasks"]);
    // Sorted where order carries no meaning: a table's columns may be declared in another order.
    const comparable = (schema: LogicalSchema) =>
      Object.fromEntries(
        Object.entries(schema).map(([name, table]) => [
          name,
          {
            ...table,
            columns: Object.fromEntries(Object.entries(table.columns).sort()),
            unique: table.unique.sort(),
            foreignKeys: table.foreignKeys.sort(),
          },
        ]),
      );
    expect(comparable(postgres)).toEqual(comparable(sqlite));
  });
});
