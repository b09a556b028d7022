import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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

/**
 * The ways a number can sit in a file: as text, or as SQLite stores an integer (big-endian,
 * in 6 bytes up to 2^47, else 8).
 */
function encodings(digits: string): Buffer[] {
  const value = BigInt(digits);
  const eight = Buffer.alloc(8);
  eight.writeBigInt64BE(value);
  return [Buffer.from(digits), eight, eight.subarray(2)];
}

/** The files under `dir` (relative names) that hold the number's digits in any of its encodings. */
export function filesHolding(dir: string, digits: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => {
    const path = join(dir, name);
    if (!statSync(path).isFile()) return false;
    const bytes = readFileSync(path);
    return encodings(digits).some((encoded) => bytes.includes(encoded));
  });
}
