import type { StoreCheck } from "./health.js";
import type { ConnectBounds, ConnectionEnv } from "./postgres-connection.js";
import { sqlitePath } from "./location.js";
import { checkSqliteFile } from "./sqlite-check.js";
import { SqliteStore } from "./sqlite-store.js";
import { adoptLegacyJournal, type AdoptedJournal } from "./journal-import.js";
import type { Lease, Store } from "./store.js";

export type { ConnectionEnv } from "./postgres-connection.js";

/** A store as opened: its schema version (the last migration it has run) beside the interface. */
export type OpenedStore = Store & { readonly schemaVersion: number };

/**
 * Where the journal of bulkcheck 0.1 may be waiting to be adopted (see adoptLegacyJournal):
 * the state directory, the time, and the lease its open runs are created under.
 */
export interface LegacyJournal {
  stateDir: string;
  nowMs: number;
  lease: Lease;
}

/**
 * Opens the store `location` names and brings its schema up to date: a `postgres://` or
 * `postgresql://` URL is a team's PostgreSQL (the password from the URL, PGPASSWORD or the
 * password file, `sslmode` honoured: see postgresTarget), a `file:` URL or a path is an
 * SQLite file. A server that cannot be reached fails here, before any upload, with
 * StoreUnavailableError (exit 7); a URL, login or certificate that is wrong with a UsageError
 * (exit 2); a damaged SQLite file with StoreDamagedError (exit 3), and a schema a newer
 * bulkcheck migrated with StoreTooNewError (exit 2); connecting ends within `bounds` too
 * (see PostgresDb.open). The store's `location`, and every message about it, names the URL
 * without its password.
 */
export async function openStore(location: string, env: ConnectionEnv, bounds?: ConnectBounds): Promise<OpenedStore> {
  const path = sqlitePath(location);
  if (path !== undefined) return SqliteStore.open(path);
  // pg is loaded only by those who use a shared store.
  const { PostgresStore } = await import("./postgres-store.js");
  return PostgresStore.open(location, env, bounds);
}

/**
 * openStore, then the journal of bulkcheck 0.1 in `journal.stateDir` adopted into it once
 * (a look for one file when there is none): what was adopted, for the caller to tell.
 */
export async function openStoreAdopting(
  location: string,
  env: ConnectionEnv,
  journal: LegacyJournal,
  bounds?: ConnectBounds,
): Promise<{ store: OpenedStore; adopted: AdoptedJournal | undefined }> {
  const store = await openStore(location, env, bounds);
  try {
    return { store, adopted: await adoptLegacyJournal(store, journal.stateDir, journal.nowMs, journal.lease) };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * `store check` of the store `location` names: an SQLite file is read as it is (see
 * checkSqliteFile), so a damaged one is described rather than refused; a team's PostgreSQL
 * is opened as every command opens it, then its schema compared (see PostgresStore.check).
 */
export async function checkStore(location: string, env: ConnectionEnv): Promise<StoreCheck> {
  const path = sqlitePath(location);
  if (path !== undefined) return checkSqliteFile(path);
  const { PostgresStore } = await import("./postgres-store.js");
  const store = await PostgresStore.open(location, env);
  try {
    return await store.check();
  } finally {
    await store.close();
  }
}
