import { count } from "../format-count.js";
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { InputRejectedError } from "../errors.js";
import type { RunSource } from "../store/store.js";
import { fileSha256 } from "./file-sha256.js";

/** What identifies a source file as it was submitted: recorded with its run, beside its path. */
export interface SourceFingerprint {
  size: number;
  mtimeMs: number;
  sha256: string;
}

/**
 * The file's size, modification time and sha256; undefined for what is not a
 * regular file (a pipe is read once, by the preparation). A file that changes
 * while it is hashed (an exporter still writing it) is refused: no fingerprint would be true.
 */
async function fingerprintOf(path: string): Promise<SourceFingerprint | undefined> {
  const before = await stat(path);
  return before.isFile() ? hashedSince(path, before) : undefined;
}

/** The fingerprint of the regular file at `path` whose size and modification time were `before`; `signal` stops the hashing. */
async function hashedSince(path: string, before: Stats, signal?: AbortSignal): Promise<SourceFingerprint> {
  const fingerprint = { size: before.size, mtimeMs: before.mtimeMs, sha256: await fileSha256(path, signal) };
  await assertUnchangedSince(path, fingerprint);
  return fingerprint;
}

/** Refuses (exit 3) a file whose size or modification time moved since `fingerprint` was taken, e.g. while it was prepared. */
async function assertUnchangedSince(path: string, fingerprint: SourceFingerprint): Promise<void> {
  const now = await stat(path);
  if (now.size !== fingerprint.size || now.mtimeMs !== fingerprint.mtimeMs) {
    throw new InputRejectedError(`${path} changed while it was being read; nothing was uploaded.`, {
      hint: "Run the command again once whatever writes the file has finished.",
    });
  }
}

/**
 * How the file at `path` differs from the one submitted, in words ("size 1200 →
 * 1350 bytes", "modified … → …", "content differs"); empty when the content is
 * the same, whatever its modification time says (an export run again that wrote
 * the same rows joins correctly).
 */
export async function sourceChanges(submitted: SourceFingerprint, path: string): Promise<string[]> {
  let now: SourceFingerprint | undefined;
  try {
    now = await fingerprintOf(path);
  } catch (error) {
    return [`it can no longer be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`];
  }
  if (!now) return ["it is no longer a regular file"];
  if (now.sha256 === submitted.sha256) return [];
  const changes: string[] = [];
  if (now.size !== submitted.size) changes.push(`size ${count(submitted.size)} → ${count(now.size)} bytes`);
  if (now.mtimeMs !== submitted.mtimeMs) {
    changes.push(`modified ${new Date(submitted.mtimeMs).toISOString()} → ${new Date(now.mtimeMs).toISOString()}`);
  }
  changes.push("content differs");
  return changes;
}

/**
 * Runs `read` (the preparation) on the source file at `path` while the file's
 * fingerprint is taken (its size and modification time from before both), and
 * refuses a file that changed meanwhile, so the run says exactly which file its
 * uploads were made from. A list that `read` refuses stops the hashing: one refused
 * from its first bytes (a 2 GB file of NULs) is not read to its end first. Without
 * a path (stdin) there is nothing to fingerprint. A file that cannot be read is
 * left to `read` to report in its own words.
 */
export async function readSourceFile<T>(path: string | undefined, read: () => Promise<T>): Promise<{ value: T; source: RunSource }> {
  if (path === undefined) return { value: await read(), source: {} };
  const before = await stat(path).catch(() => undefined);
  const stopHashing = new AbortController();
  const fingerprinting = before?.isFile() ? hashedSince(path, before, stopHashing.signal).catch(() => undefined) : undefined;
  let value: T;
  try {
    value = await read();
  } catch (error) {
    stopHashing.abort();
    await fingerprinting;
    throw error;
  }
  const fingerprint = await fingerprinting;
  if (fingerprint) await assertUnchangedSince(path, fingerprint);
  return { value, source: { path, ...fingerprint } };
}

/** The fingerprint in a run's source, if it was recorded (runs imported from old journals may have none). */
export function recordedFingerprint(source: RunSource): SourceFingerprint | undefined {
  const { size, mtimeMs, sha256 } = source;
  if (typeof size !== "number" || typeof mtimeMs !== "number" || typeof sha256 !== "string") return undefined;
  return { size, mtimeMs, sha256 };
}
