import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.js";
import type { ConnectBounds, ConnectionEnv } from "./postgres-connection.js";
import { SqliteStore } from "./sqlite-store.js";
import type { Store } from "./store.js";

/** A store as opened: its schema version (how many migrations it has run) beside the interface. */
export type OpenedStore = Store & { readonly schemaVersion: number };

/** A URL's scheme, told apart from a path (a Windows drive letter is one character: `C:\…`). */
const SCHEME = /^([a-z][a-z0-9+.-]+):/i;
const OTHER_URL = /^[a-z][a-z0-9+.-]+:\/\//i;

/**
 * Opens the store `location` names and brings its schema up to date: a `postgres://` or
 * `postgresql://` URL is a team's PostgreSQL (the password from the URL, PGPASSWORD or the
 * password file, `sslmode` honoured: see postgresTarget), a `file:` URL or a path is an
 * SQLite file. A server that cannot be reached fails here, before any upload, with
 * StoreUnavailableError (exit 7); a URL, login or certificate that is wrong with a UsageError
 * (exit 2); connecting ends within `bounds` too (see PostgresDb.open). The store's
 * `location`, and every message about it, names the URL without its password.
 */
export async function openStore(location: string, env: ConnectionEnv, bounds?: ConnectBounds): Promise<OpenedStore> {
  const scheme = SCHEME.exec(location)?.[1]?.toLowerCase();
  if (scheme === "postgres" || scheme === "postgresql") {
    // pg is loaded only by those who use a shared store.
    const { PostgresStore } = await import("./postgres-store.js");
    return PostgresStore.open(location, env, bounds);
  }
  if (scheme === "file") return SqliteStore.open(fileURLToPath(location));
  if (OTHER_URL.test(location)) {
    throw new UsageError(`bulkcheck cannot keep its store at a ${scheme}:// URL.`, {
      hint: "Give a postgres://user@host/database URL for a team's PostgreSQL, or the path of a local SQLite file.",
    });
  }
  return SqliteStore.open(location);
}
