import { existsSync } from "node:fs";
import { UsageError } from "../errors.js";
import { schemaProblems, schemaShape, StoreDamagedError, StoreTooNewError, type SchemaShape, type StoreCheck } from "./health.js";
import { SqliteDb } from "./sqlite-db.js";
import { appliedMigrations, latestVersion } from "./migrations/migration.js";
import { SQLITE_MIGRATIONS } from "./migrations/sqlite.js";

/**
 * `store check` of an SQLite store, read as it is (nothing migrated or written), so that a
 * damaged file is described rather than refused: SQLite's integrity check (every page and
 * every index entry), then each table and column against what the file's own migrations
 * make. A file of a newer schema is refused as every command refuses it.
 * @throws UsageError when there is no file; StoreTooNewError.
 */
export function checkSqliteFile(path: string): StoreCheck {
  if (!existsSync(path)) {
    throw new UsageError(`There is no store at ${path}: nothing to check.`, {
      hint: "bulkcheck creates it when a command first needs it (bulkcheck store init).",
    });
  }
  const db = SqliteDb.inspect(path);
  let schemaVersion: number | undefined;
  try {
    schemaVersion = db.schemaVersion;
    if (schemaVersion > latestVersion(SQLITE_MIGRATIONS)) throw new StoreTooNewError(path, schemaVersion, latestVersion(SQLITE_MIGRATIONS));
    // libsql gives SQLite's report as one text, a problem a line, under a line naming the database.
    const broken = db
      .rows("PRAGMA integrity_check")
      .flatMap(([report]) => String(report).split("\n"))
      .filter((line) => line !== "ok" && line !== "" && !line.startsWith("*** in database"));
    const problems = broken.length > 0 ? broken : schemaProblems(migratedShape(schemaVersion), shapeOf(db));
    return { kind: "sqlite", location: path, schemaVersion, problems };
  } catch (error) {
    if (!(error instanceof StoreDamagedError)) throw error;
    return { kind: "sqlite", location: path, ...(schemaVersion === undefined ? {} : { schemaVersion }), problems: [error.problem] };
  } finally {
    db.close();
  }
}

/** The tables and columns of the database (SQLite's own tables left out), with their declared types. */
function shapeOf(db: SqliteDb): SchemaShape {
  const rows = db.rows(
    `SELECT m.name, p.name, p.type FROM sqlite_schema m JOIN pragma_table_info(m.name) p
     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid`,
  );
  return schemaShape(rows.map(([table, column, type]) => [String(table), String(column), String(type)] as const));
}

/** The shape the first `version` migrations make, in a database in memory. */
function migratedShape(version: number): SchemaShape {
  const db = SqliteDb.inspect(":memory:");
  try {
    for (const migration of appliedMigrations(SQLITE_MIGRATIONS, version)) db.exec(migration.statements);
    return shapeOf(db);
  } finally {
    db.close();
  }
}
