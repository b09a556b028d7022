import type { PoolClient } from "pg";
import { StoreTooNewError } from "./health.js";
import { latestVersion, pendingMigrations } from "./migrations/migration.js";
import { POSTGRES_MIGRATIONS } from "./migrations/postgres.js";

/**
 * The advisory lock that serialises migrations across every machine sharing the database
 * (an arbitrary constant, "bulkchek" in ASCII, which no other application is likely to take).
 */
const MIGRATION_LOCK = 0x62756c6b6368656bn;

/** The schema version: the last migration run (0 for a database bulkcheck never used). */
async function schemaVersion(client: PoolClient): Promise<number> {
  const exists = await client.query<[string | null]>({ text: "SELECT to_regclass('bulkcheck.schema_version')::text", rowMode: "array" });
  if (exists.rows[0]![0] === null) return 0;
  const { rows } = await client.query<[number]>({
    text: "SELECT COALESCE(max(version), 0) FROM bulkcheck.schema_version",
    rowMode: "array",
  });
  return Number(rows[0]![0]);
}

/**
 * Brings the schema to the latest version and returns it. Two machines may do so at once:
 * the migrations run in one transaction holding MIGRATION_LOCK, and the one that waited for
 * it finds them done. A database migrated by a newer bulkcheck is refused (StoreTooNewError,
 * naming `location`), not written with an older idea of its tables.
 */
export async function migrate(client: PoolClient, location: string): Promise<number> {
  const latest = latestVersion(POSTGRES_MIGRATIONS);
  let version = await schemaVersion(client);
  if (version < latest) {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK.toString()]);
      // Created only if missing: a user may have the schema granted without the right to create one.
      await client.query(`DO $$ BEGIN
          IF to_regnamespace('bulkcheck') IS NULL THEN CREATE SCHEMA bulkcheck; END IF;
        END $$`);
      await client.query(`CREATE TABLE IF NOT EXISTS bulkcheck.schema_version (
          version integer PRIMARY KEY,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`);
      version = await schemaVersion(client);
      for (const migration of pendingMigrations(POSTGRES_MIGRATIONS, version)) {
        await client.query(migration.statements);
        await client.query("INSERT INTO bulkcheck.schema_version (version) VALUES ($1)", [migration.version]);
        version = migration.version;
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }
  if (version > latest) throw new StoreTooNewError(location, version, latest);
  return version;
}
