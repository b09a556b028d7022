import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Temporary files of an output being written (see AtomicFile) and of a spooled zip.
 * They live next to the destination and carry the writer's pid in their name,
 * `.{basename}.bulkcheck-{pid}-{random}{suffix}.tmp`, so a process killed outright
 * (SIGKILL) leaves files a later run can recognise as stale and remove.
 */

const TEMP_NAME = /^\.(.+)\.bulkcheck-(\d+)-[0-9a-f]+(?:\.[a-z]+)?\.tmp$/;

/** A fresh temp path for `target` in `dir`; `suffix` (".zip") tells a spool from an output. */
export function tempPathFor(target: string, suffix = "", dir = dirname(target)): string {
  const random = randomBytes(6).toString("hex");
  return join(dir, `.${basename(target)}.bulkcheck-${process.pid}-${random}${suffix}.tmp`);
}

/** Whether a process with this id is running (EPERM: it is, under another user). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes temp files that a dead bulkcheck process left for `target` in `dir`
 * (default: the target's directory). Files of running processes, this one
 * included, are kept. Best effort: what cannot be listed or removed (another
 * user's file) is left for the writer to fail on, if it must. Returns the paths removed.
 */
export async function removeStaleTempFiles(target: string, dir = dirname(target)): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dir).catch(() => [])) {
    const match = TEMP_NAME.exec(name);
    if (!match || match[1] !== basename(target) || isRunning(Number(match[2]))) continue;
    const path = join(dir, name);
    if (
      await rm(path, { force: true }).then(
        () => true,
        () => false,
      )
    )
      removed.push(path);
  }
  return removed;
}

/**
 * The temp files one caller currently owns. `writeResults` registers every temp file
 * here and removes it when done; the CLI passes its own instance so an exit handler
 * can call `cleanupSync()` when the process ends before the promise settles.
 */
export class TempFiles {
  readonly #paths = new Set<string>();

  /** Paths registered and not yet removed. */
  get paths(): readonly string[] {
    return [...this.#paths];
  }

  add(path: string): void {
    this.#paths.add(path);
  }

  /** Forgets a path that no longer exists as a temp file (renamed into place). */
  release(path: string): void {
    this.#paths.delete(path);
  }

  async remove(path: string): Promise<void> {
    await rm(path, { force: true });
    this.#paths.delete(path);
  }

  /** Removes every registered file synchronously, for `process.on("exit")` handlers. Never throws. */
  cleanupSync(): void {
    for (const path of this.#paths) {
      try {
        rmSync(path, { force: true });
      } catch {
        // An exit handler cannot report; a leftover file is recognisably stale next run.
      }
      this.#paths.delete(path);
    }
  }
}
