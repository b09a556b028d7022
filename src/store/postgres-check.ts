import { schemaProblems, schemaShape, type SchemaShape } from "./health.js";
import type { ColumnValue } from "./store.js";
import type { PostgresDb } from "./postgres-db.js";
import { appliedMigrations } from "./migrations/migration.js";
import { POSTGRES_MIGRATIONS } from "./migrations/postgres.js";

/** The columns of a schema's tables, with their types, in the order a table declares them. */
const COLUMNS = `SELECT table_name, column_name, data_type FROM information_schema.columns
  WHERE table_schema = $1 ORDER BY table_name, ordinal_position`;

/**
 * What the `bulkcheck` schema of an opened store (opening refused a newer schema and
 * migrated an older one) lacks of what its migrations make: each table, column and type.
 * What the migrations make is made for comparison as temporary tables (the migrations with
 * `bulkcheck.` read as `pg_temp.`) in a transaction that is rolled back: nothing of it
 * stays, and the team's own tables are only read.
 */
export async function postgresSchemaProblems(db: PostgresDb): Promise<string[]> {
  return db.rolledBack(async (client) => {
    const actual = shapeOf(await client.query(COLUMNS, ["bulkcheck"]));
    for (const migration of appliedMigrations(POSTGRES_MIGRATIONS, db.schemaVersion)) {
      await client.query(migration.statements.replaceAll(/\bbulkcheck\./g, "pg_temp."));
    }
    const [[temporary]] = (await client.query("SELECT pg_my_temp_schema()::regnamespace::text")) as [[string]];
    return schemaProblems(shapeOf(await client.query(COLUMNS, [temporary])), actual);
  });
}

function shapeOf(rows: readonly ColumnValue[][]): SchemaShape {
  return schemaShape(rows.map(([table, column, type]) => [String(table), String(column), String(type)] as const));
}
