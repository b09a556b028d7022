import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.js";

/** A URL's scheme, told apart from a path (a Windows drive letter is one character: `C:\…`). */
const SCHEME = /^([a-z][a-z0-9+.-]+):/i;
const OTHER_URL = /^[a-z][a-z0-9+.-]+:\/\//i;

/**
 * The SQLite file a store location names (a path, or a `file:` URL), or undefined for a
 * team's PostgreSQL (`postgres://` or `postgresql://`). Reads no file and loads no driver,
 * so a command that only needs to know where the store is pays for neither.
 * @throws UsageError for a URL of any other scheme.
 */
export function sqlitePath(location: string): string | undefined {
  const scheme = SCHEME.exec(location)?.[1]?.toLowerCase();
  if (scheme === "postgres" || scheme === "postgresql") return undefined;
  if (scheme === "file") return fileURLToPath(location);
  if (OTHER_URL.test(location)) {
    throw new UsageError(`bulkcheck cannot keep its store at a ${scheme}:// URL.`, {
      hint: "Give a postgres://user@host/database URL for a team's PostgreSQL, or the path of a local SQLite file.",
    });
  }
  return location;
}

/**
 * The files of the store at `location` on this machine: the SQLite file and the files SQLite
 * keeps beside it (the write-ahead log, its shared-memory index, a rollback journal), whether
 * they exist at the moment or not; none for PostgreSQL.
 */
export function localStoreFiles(location: string): string[] {
  const path = sqlitePath(location);
  return path === undefined ? [] : [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
}
