import { join } from "node:path";
import { afterEach } from "vitest";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { tempDir } from "./cli.js";

/** Registers an afterEach that closes every store the test opened; returns the opener of a fresh SQLite store in a temp directory. */
export function tempStores(): () => SqliteStore {
  const opened: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return () => {
    const store = SqliteStore.open(join(tempDir(), "bulkcheck.db"));
    opened.push(store);
    return store;
  };
}
