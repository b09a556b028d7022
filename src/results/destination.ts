import { constants, type Stats } from "node:fs";
import { access, lstat, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../errors.js";
import { DestinationExistsError, DestinationIsSourceError, DestinationNotReplaceableError, isReplaceable } from "./errors.js";
import { removeStaleTempFiles } from "./temp-files.js";

export interface DestinationRules {
  /** Replace a regular file, or a symbolic link (the link itself, never what it points to), that stands at the path. */
  force?: boolean;
  /** Paths of the files the command reads (the list, a join's source): the destination may be none of them, under any name. */
  reading?: readonly string[];
  /** What messages call the destination, such as the path as the user typed it (default: the path). */
  name?: string;
}

export interface DestinationState {
  /** What stands at the path (a symbolic link itself, not its target), or undefined when nothing does. */
  existing: Stats | undefined;
  /** Temp files of dead writers removed beside it. */
  staleTempFilesRemoved: string[];
}

/**
 * The one decision whether bulkcheck may write a file at `path` (absolute). Every
 * output asks it before anything is read or uploaded, and the atomic writer asks
 * again when it creates the file and when it puts it in place:
 * - never a file being read, under any name: compared by device and inode, both
 *   what stands at the path and, for a symbolic link, what the link points to;
 * - never a directory, device, FIFO or socket; a file or link that exists only with
 *   `force`, and a link is then replaced by the file, never written through;
 * - its directory must exist and be writable.
 * Temp files that killed writers left for this path are removed first, so they go
 * even when the answer is no (a destination that exists).
 * @throws DestinationIsSourceError, DestinationExistsError, DestinationNotReplaceableError
 *   or a UsageError naming the directory: all exit 2, nothing written.
 */
export async function checkDestination(path: string, rules: DestinationRules = {}): Promise<DestinationState> {
  const name = rules.name ?? path;
  const existing = await statsOrNothing(lstat(path));
  const pointedTo = existing?.isSymbolicLink() ? await statsOrNothing(stat(path)) : existing;
  for (const source of rules.reading ?? []) {
    const read = await statsOrNothing(stat(source));
    if (read && [existing, pointedTo].some((entry) => entry && sameFile(entry, read))) {
      throw new DestinationIsSourceError(name, resolve(source) === resolve(path) ? undefined : source);
    }
  }
  if (pointedTo?.isDirectory()) {
    throw new UsageError(`${name} is a directory; bulkcheck writes a file there.`, {
      hint: `Give a file path, such as ${join(name, "results.csv")}.`,
    });
  }
  await checkWritableDirectory(path, name);
  const staleTempFilesRemoved = await removeStaleTempFiles(path);
  if (existing && !rules.force) throw new DestinationExistsError(name);
  if (existing && !isReplaceable(existing)) throw new DestinationNotReplaceableError(name, existing);
  return { existing, staleTempFilesRemoved };
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** The stats, or undefined when there is nothing (or nothing reachable: a dangling link) to stat. */
async function statsOrNothing(pending: Promise<Stats>): Promise<Stats | undefined> {
  return pending.catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR" || error.code === "ELOOP") return undefined;
    throw error;
  });
}

/** Refuses a path whose directory does not exist or cannot be written (`access(W_OK)`: for root, only a read-only file system says no). */
async function checkWritableDirectory(path: string, name: string): Promise<void> {
  const dir = dirname(path);
  if (!(await statsOrNothing(stat(dir)))?.isDirectory()) {
    throw new UsageError(`Cannot write ${name}: the directory ${dir} does not exist.`, {
      hint: "Create it first, or choose another path.",
    });
  }
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    throw new UsageError(`Cannot write ${name}: the directory ${dir} is not writable (${(error as NodeJS.ErrnoException).code}).`, {
      hint: "Choose a writable directory, or change its permissions.",
      cause: error,
    });
  }
}
