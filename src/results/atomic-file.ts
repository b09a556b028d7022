import type { Writable } from "node:stream";
import { constants } from "node:fs";
import { access, link, lstat, open, rename, unlink, type FileHandle } from "node:fs/promises";
import type { Stats } from "node:fs";
import { dirname, resolve } from "node:path";
import { asOutputWriteError, DestinationExistsError, DestinationNotReplaceableError, isReplaceable } from "./errors.js";
import { tempPathFor, type TempFiles } from "./temp-files.js";

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
 * Resolves once the stream has closed its file (at once if it already has). Not
 * `events.once`: a stream destroyed with an error emits `error` first, and the
 * caller only needs to know the descriptor is released.
 */
function closed(stream: Writable): Promise<void> {
  return new Promise((resolve) => (stream.closed ? resolve() : stream.once("close", () => resolve())));
}

/** What stands at `path` (a symbolic link itself, not its target), or undefined when nothing does. */
async function entryAt(path: string): Promise<Stats | undefined> {
  return lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
}

/** What `force` may replace at `path`: nothing, a regular file or a symbolic link. A device, FIFO, socket or directory is refused. */
async function replaceableEntry(path: string): Promise<Stats | undefined> {
  const entry = await entryAt(path);
  if (entry && !isReplaceable(entry)) throw new DestinationNotReplaceableError(path, entry);
  return entry;
}

export interface AtomicFileOptions {
  /** Replace a regular file or symbolic link that exists (never a device, FIFO, socket or directory). */
  force?: boolean;
  temps: TempFiles;
  /**
   * The file's mode. By default a file it replaces keeps that file's mode, and a
   * new one gets the umask's, as `cp` and `curl -o` do.
   */
  mode?: number;
}

/**
 * A file that appears at its path complete or not at all. Bytes go to a temp file in
 * the destination's own directory (a rename across filesystems is not atomic); the
 * stream fsyncs it before closing, `commit()` renames it into place and syncs the
 * directory, `discard()` removes it. A SIGKILL can leave the temp file behind, never a
 * partial destination. The file system's refusals (no space, permissions) are
 * OutputWriteErrors naming the path.
 */
export class AtomicFile {
  readonly path: string;
  readonly tempPath: string;
  /** Write the content here and end it; it fsyncs the file before it closes. */
  readonly stream: Writable;
  readonly #force: boolean;
  readonly #temps: TempFiles;
  #failure: unknown;

  private constructor(path: string, tempPath: string, handle: FileHandle, force: boolean, temps: TempFiles) {
    this.path = path;
    this.tempPath = tempPath;
    this.#force = force;
    this.#temps = temps;
    this.stream = handle.createWriteStream({ flush: true, highWaterMark: WRITE_BUFFER_BYTES });
    this.stream.once("error", (error) => (this.#failure = error));
  }

  /**
   * What a failed write means: when the file's own stream failed (no space, a
   * quota), an OutputWriteError naming the path; otherwise `error` as it was (a
   * source that could not be read is no fault of the destination).
   */
  explain(error: unknown): unknown {
    return this.#failure === undefined ? error : asOutputWriteError(this.#failure, this.path);
  }

  /**
   * Opens the temp file for `path`, so an unwritable directory fails before any download.
   * @throws DestinationExistsError when `path` exists and `force` is false;
   *   DestinationNotReplaceableError when it is not a file `force` may replace.
   */
  static async create(path: string, options: AtomicFileOptions): Promise<AtomicFile> {
    const target = resolve(path);
    const force = options.force ?? false;
    if (!force && (await exists(target))) throw new DestinationExistsError(path);
    const replaced = force ? await replaceableEntry(target) : undefined;
    const mode = options.mode ?? (replaced?.isFile() ? replaced.mode & 0o7777 : undefined);
    const tempPath = tempPathFor(target);
    // Registered before it exists, so an exit handler never misses it.
    options.temps.add(tempPath);
    let handle: FileHandle | undefined;
    try {
      handle = await open(tempPath, "wx", mode ?? 0o666);
      // open() applies the umask; a mode that was asked for (or kept) is set exactly.
      if (mode !== undefined) await handle.chmod(mode);
    } catch (error) {
      await handle?.close();
      await options.temps.remove(tempPath);
      throw asOutputWriteError(error, target);
    }
    return new AtomicFile(target, tempPath, handle, force, options.temps);
  }

  /**
   * Puts the written file at `path`, once the stream has ended and closed. Without
   * `force` the file is hard-linked into place, which fails if someone created `path`
   * meanwhile; filesystems without hard links fall back to check-then-rename.
   * @throws DestinationExistsError when `path` appeared during the write.
   */
  async commit(): Promise<void> {
    await closed(this.stream);
    try {
      if (this.#force) {
        // Checked again: what was a file when the write began may have been swapped for a device since.
        await replaceableEntry(this.path);
        await rename(this.tempPath, this.path);
      } else {
        await this.#placeWithoutClobbering();
      }
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
    await this.#temps.remove(this.tempPath);
  }
}
