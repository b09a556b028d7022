import { constants, type Stats } from "node:fs";
import { access, link, lstat, open, readdir, realpath, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { UsageError } from "../errors.js";
import { asOutputWriteError, FileSystemError } from "../file-system-errors.js";
import { DestinationExistsError, DestinationIsSourceError, DestinationNotReplaceableError, isReplaceable } from "./errors.js";
import { removeStaleTempFiles, TempFiles, tempPathFor } from "./temp-files.js";

/** A file the command reads (the list, a join's source, bulkcheck's store) that no output may be, under any name. */
export interface ReadFile {
  path: string;
  /** What messages say it is: "the list being read", "part of bulkcheck's store". */
  role: string;
  /** A directory: no file in it may be written either, nor a link to one of its files. */
  tree?: boolean;
  /** Why no output may be it, ending the message (default: "bulkcheck never writes over its input"). */
  why?: string;
}

/** The list a command reads (or a join's source), as a ReadFile. */
export function listBeingRead(path: string): ReadFile {
  return { path, role: "the list being read" };
}

export interface DestinationRules {
  /** Replace a regular file, or a symbolic link (the link itself, never what it points to), that stands at the path. */
  force?: boolean;
  /** The files the command reads: the destination may be none of them, under any name. */
  reading?: readonly ReadFile[];
  /** What messages call the destination, such as the path as the user typed it (default: the path). */
  name?: string;
  /** The flag that names the destination, for hints (default: -o). */
  flag?: string;
  /** Whether that flag takes `-` for stdout, so a hint may offer it for a pipe or device (default: true). */
  takesStdout?: boolean;
}

interface DestinationState {
  /** What stands at the path (a symbolic link itself, not its target), or undefined when nothing does. */
  existing: Stats | undefined;
  /** Temp files of dead writers removed beside it. */
  staleTempFilesRemoved: string[];
  /** The path is /dev/null: written in place (it keeps nothing), never replaced. */
  discards: boolean;
}

/**
 * The one decision whether bulkcheck may write a file at `path` (absolute). Every
 * output asks it before anything is read or uploaded, and the atomic writer asks
 * again when it creates the file and when it puts it in place:
 * - never a file being read, under any name (see checkNotRead);
 * - /dev/null, the way to throw an output away, is written in place (`discards`);
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
  await checkNotRead(path, rules.reading ?? [], name);
  const pointedTo = existing?.isSymbolicLink() ? await statsOrNothing(stat(path)) : existing;
  if (pointedTo && (await isNullDevice(path, pointedTo))) return { existing, staleTempFilesRemoved: [], discards: true };
  if (pointedTo?.isDirectory()) {
    throw new UsageError(`${name} is a directory; bulkcheck writes a file there.`, {
      hint: `Give a file path, such as ${join(name, "results.csv")}.`,
    });
  }
  await checkWritableDirectory(path, name);
  const staleTempFilesRemoved = await removeStaleTempFiles(path);
  // Before "exists": --force would not help.
  if (existing && !isReplaceable(existing)) throw new DestinationNotReplaceableError(name, existing, rules.flag, rules.takesStdout);
  if (existing && !rules.force) throw new DestinationExistsError(name);
  return { existing, staleTempFilesRemoved, discards: false };
}

/**
 * Refuses `path` (absolute) when it is one of the files `reading` names, under any name
 * (see isReadFile): checkDestination's first rule, on its own for a file that is appended
 * to rather than replaced.
 * @throws DestinationIsSourceError (exit 2) naming it as `name`.
 */
export async function checkNotRead(path: string, reading: readonly ReadFile[], name = path): Promise<void> {
  if (reading.length === 0) return;
  const existing = await statsOrNothing(lstat(path));
  const pointedTo = existing?.isSymbolicLink() ? await statsOrNothing(stat(path)) : existing;
  for (const file of reading) {
    if (await isReadFile(path, [existing, pointedTo], file)) {
      throw new DestinationIsSourceError(name, resolve(file.path) === resolve(path) ? undefined : file.path, file);
    }
  }
}

/**
 * Whether writing `path` would write `file`, compared by device and inode: what stands at
 * the path or, for a symbolic link, what it points to, is the file (or, for a tree, any file
 * in it), or the path's directory is the tree or one inside it. A file that is not there at
 * the moment (a store's write-ahead log between uses) is compared by its name in the same
 * directory: written now, it would be found there later.
 */
async function isReadFile(path: string, written: ReadonlyArray<Stats | undefined>, file: ReadFile): Promise<boolean> {
  const read = await statsOrNothing(stat(file.path));
  if (!read) return basename(path) === basename(file.path) && (await sameDirectory(path, file.path));
  const inTree = file.tree && read.isDirectory() ? await everythingUnder(file.path) : [];
  if (written.some((entry) => entry && [read, ...inTree].some((stats) => sameFile(entry, stats)))) return true;
  if (!file.tree) return false;
  const directory = await statsOrNothing(stat(dirname(path)));
  return directory !== undefined && [read, ...inTree].some((stats) => stats.isDirectory() && sameFile(directory, stats));
}

/** Whether two paths' directories are one directory, under any name. */
async function sameDirectory(a: string, b: string): Promise<boolean> {
  const [first, second] = await Promise.all([statsOrNothing(stat(dirname(a))), statsOrNothing(stat(dirname(b)))]);
  return first !== undefined && second !== undefined && sameFile(first, second);
}

/** The stats of every file and directory inside `dir` (links as themselves). */
async function everythingUnder(dir: string): Promise<Stats[]> {
  const names = await readdir(dir, { recursive: true }).catch(() => []);
  const stats = await Promise.all(names.map((name) => statsOrNothing(lstat(join(dir, name)))));
  return stats.filter((entry) => entry !== undefined);
}

/** Whether `path`, whose target is `stats`, is /dev/null itself (a null device made elsewhere is some other special file). */
async function isNullDevice(path: string, stats: Stats): Promise<boolean> {
  return stats.isCharacterDevice() && (await realpath(path).catch(() => undefined)) === NULL_DEVICE;
}

/** Where an output is thrown away: accepted as any output's path, as often as it is named. */
export const NULL_DEVICE = "/dev/null";

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

/**
 * Bytes the output stream buffers before it asks for a pause. The default (16 KiB) is
 * less than one chunk of a download, so every write waited for the disk before the next
 * chunk was read; with room for a few chunks, reading and writing overlap.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/** Link errors that mean "this filesystem has no hard links", not "the name is taken". */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

async function exists(path: string): Promise<boolean> {
  return access(path, constants.F_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Flushes a directory entry (the rename) to disk. Some platforms cannot open or sync
 * a directory; the rename itself is still atomic there, so failure is ignored.
 */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r").catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/**
 * Flushes a file written whole to disk before it is put in place. Done then rather than as
 * its stream closes (the stream's `flush` option): a stream destroyed midway (Ctrl-C, a
 * --timeout, a result over its bound) would otherwise sync gigabytes that are about to be
 * removed, and the process would wait for that past its --timeout (2 GB: 3.5 s here).
 */
export async function syncFile(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Resolves once the stream has closed its file (at once if it already has). Not
 * `events.once`: a stream destroyed with an error emits `error` first, and the
 * caller only needs to know the descriptor is released.
 */
function closed(stream: Writable): Promise<void> {
  return new Promise((resolve) => (stream.closed ? resolve() : stream.once("close", () => resolve())));
}

export interface AtomicFileOptions extends DestinationRules {
  /** Where the temp file is registered, so an exit handler can remove it (default: a registry of its own). */
  temps?: TempFiles;
  /**
   * The file's mode. By default a file it replaces keeps that file's mode, and a
   * new one gets the umask's, as `cp` and `curl -o` do.
   */
  mode?: number;
}

/**
 * A file that appears at its path complete or not at all. Whether the path may be
 * written at all is checkDestination's decision, asked when the file is created and
 * again before it is put in place. Bytes go to a temp file in the destination's own
 * directory (a rename across filesystems is not atomic); `commit()` syncs it, puts it in
 * place and syncs the directory, `discard()` removes
 * it. A SIGKILL can leave the temp file behind, never a partial destination, and the
 * next writer of the path removes it. The file system's refusals (no space,
 * permissions) are FileSystemErrors naming the path.
 */
export class AtomicFile {
  readonly path: string;
  readonly tempPath: string;
  /** Write the content here and end it (commit syncs it to disk). */
  readonly stream: Writable;
  /** Temp files of dead writers removed beside the path when this one was created. */
  readonly staleTempFilesRemoved: readonly string[];
  readonly #rules: DestinationRules;
  readonly #temps: TempFiles;
  /** /dev/null: the stream writes to it directly, and there is nothing to put in place or remove. */
  readonly #inPlace: boolean;
  #failure: Error | undefined;

  private constructor(path: string, tempPath: string, handle: FileHandle, rules: DestinationRules, temps: TempFiles, stale: string[]) {
    this.path = path;
    this.tempPath = tempPath;
    this.#inPlace = tempPath === path;
    this.#rules = rules;
    this.#temps = temps;
    this.staleTempFilesRemoved = stale;
    this.stream = handle.createWriteStream({ highWaterMark: WRITE_BUFFER_BYTES });
    this.stream.once("error", (error) => (this.#failure = error));
  }

  /**
   * What a failed write means: when the file's own stream failed (no space, a
   * quota), or `error` is a FileSystemError naming the temp file, a FileSystemError
   * naming the path; otherwise `error` as it was (a source that could not be read is
   * no fault of the destination).
   */
  explain(error: unknown): unknown {
    if (this.#failure !== undefined) return asOutputWriteError(this.#failure, this.path);
    // Written by another writer into the temp file (SQLite's VACUUM INTO), the failure is the destination's.
    if (error instanceof FileSystemError && error.path === this.tempPath) {
      return new FileSystemError(this.path, error.systemCode, true, { cause: error.cause });
    }
    return error;
  }

  /**
   * Opens the temp file for `path` once checkDestination allows it, so a refusal or
   * an unwritable directory comes before any byte is produced.
   * @throws what checkDestination throws (DestinationExistsError, DestinationIsSourceError, …);
   *   a FileSystemError when the file system refuses the temp file.
   */
  static async create(path: string, options: AtomicFileOptions = {}): Promise<AtomicFile> {
    const target = resolve(path);
    const { temps = new TempFiles(), mode: askedMode, ...rules } = options;
    const { existing, staleTempFilesRemoved, discards } = await checkDestination(target, rules);
    if (discards) {
      try {
        return new AtomicFile(target, target, await open(target, "w"), rules, temps, []);
      } catch (error) {
        throw asOutputWriteError(error, target);
      }
    }
    const mode = askedMode ?? (existing?.isFile() ? existing.mode & 0o7777 : undefined);
    const tempPath = tempPathFor(target);
    // Registered before it exists, so an exit handler never misses it.
    temps.add(tempPath);
    let handle: FileHandle | undefined;
    try {
      handle = await open(tempPath, "wx", mode ?? 0o666);
      // open() applies the umask; a mode that was asked for (or kept) is set exactly.
      if (mode !== undefined) await handle.chmod(mode);
    } catch (error) {
      await handle?.close();
      await temps.remove(tempPath);
      throw asOutputWriteError(error, target);
    }
    return new AtomicFile(target, tempPath, handle, rules, temps, staleTempFilesRemoved);
  }

  /**
   * Writes the file at `path` with `write`, which writes into the stream it is given
   * (ending it or not), and puts it in place once `write` has resolved; on any
   * failure the temp file is removed and `path` is left as it was.
   */
  static async write<T>(path: string, options: AtomicFileOptions, write: (out: Writable) => T | Promise<T>): Promise<T> {
    const file = await AtomicFile.create(path, options);
    try {
      const value = await write(file.stream);
      if (!file.stream.writableEnded) file.stream.end();
      await finished(file.stream);
      await file.commit();
      return value;
    } catch (error) {
      // Explained before the discard, whose destroying of a stream with writes pending is no failure of the file.
      const explained = file.explain(error);
      await file.discard();
      throw explained;
    }
  }

  /**
   * Puts the written file at `path`, once the stream has ended and closed. Without
   * `force` the file is hard-linked into place, which fails if someone created `path`
   * meanwhile; filesystems without hard links fall back to check-then-rename.
   * @throws DestinationExistsError when `path` appeared during the write; an
   *   a FileSystemError when the write itself failed.
   */
  async commit(): Promise<void> {
    await closed(this.stream);
    if (this.#failure !== undefined) throw asOutputWriteError(this.#failure, this.path);
    // A device cannot be synced (EINVAL), and /dev/null keeps nothing to sync.
    if (this.#inPlace) return;
    try {
      await syncFile(this.tempPath);
      // Asked again: what was a file when the write began may since have been swapped for a device, or a link to the list.
      await checkDestination(this.path, this.#rules);
      if (this.#rules.force) await rename(this.tempPath, this.path);
      else await this.#placeWithoutClobbering();
    } catch (error) {
      throw asOutputWriteError(error, this.path);
    }
    this.#temps.release(this.tempPath);
    await syncDirectory(dirname(this.path));
  }

  async #placeWithoutClobbering(): Promise<void> {
    const linked = await link(this.tempPath, this.path).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") throw new DestinationExistsError(this.path);
        if (!NO_HARD_LINKS.has(error.code ?? "")) throw error;
        return false;
      },
    );
    if (linked) {
      await unlink(this.tempPath);
      return;
    }
    if (await exists(this.path)) throw new DestinationExistsError(this.path);
    await rename(this.tempPath, this.path);
  }

  /** Closes and removes the temp file, leaving `path` as it was. Safe to call after a failed commit. */
  async discard(): Promise<void> {
    this.stream.destroy();
    await closed(this.stream);
    if (!this.#inPlace) await this.#temps.remove(this.tempPath);
  }
}
