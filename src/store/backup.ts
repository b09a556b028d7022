import { open, stat } from "node:fs/promises";
import { finished } from "node:stream/promises";
import { AtomicFile, type AtomicFileOptions } from "../results/atomic-file.js";
import { SqliteStore } from "./sqlite-store.js";
import type { Store } from "./store.js";

/**
 * Writes a consistent copy of the SQLite store at `path` while other processes go on using
 * it (see SqliteDb.backup), as every output is written: whole or not at all (a temp file
 * beside it, synced, then put in place), never over a file `rules` forbids, 0600 since it
 * holds numbers. The copy is a store of its own: `store check` checks it, and put in the
 * store's place it is the store as it was.
 * @returns the copy's size in bytes; undefined for a team's PostgreSQL (backed up with its own tools), nothing written.
 */
export async function backupStore(store: Store, path: string, rules: AtomicFileOptions): Promise<number | undefined> {
  if (!(store instanceof SqliteStore)) return undefined;
  const file = await AtomicFile.create(path, { ...rules, mode: 0o600 });
  try {
    // SQLite writes the copy itself, into the empty temp file (VACUUM INTO takes an empty file).
    file.stream.end();
    await finished(file.stream);
    store.backup(file.tempPath);
    const handle = await open(file.tempPath, "r+");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await file.commit();
  } catch (error) {
    const explained = file.explain(error);
    await file.discard();
    throw explained;
  }
  return (await stat(file.path)).size;
}
