import type { Writable } from "node:stream";
import { constants } from "node:fs";
import { access, link, open, rename, unlink, type FileHandle } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { DestinationExistsError } from "./errors.js";
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

/**
 * A file that appears at its path complete or not at all. Bytes go to a temp file in
 * the destination's own directory (a rename across filesystems is not atomic); the
 * stream fsyncs it before closing, `commit()` renames it into place and syncs the
 * directory, `discard()` removes it. A SIGKILL can leave the temp file behind, never a
 * partial destination.
 */
export class AtomicFile {
  readonly path: string;
  readonly tempPath: string;
  /** Write the content here and end it; it fsyncs the file before it closes. */
  readonly stream: Writable;
  readonly #force: boolean;
  readonly #temps: TempFiles;

  private constructor(path: string, tempPath: string, handle: FileHandle, force: boolean, temps: TempFiles) {
    this.path = path;
    this.tempPath = tempPath;
    this.#force = force;
    this.#temps = temps;
    this.stream = handle.createWriteStream({ flush: true, highWaterMark: WRITE_BUFFER_BYTES });
  }

  /**
   * Opens the temp file for `path`, so an unwritable directory fails before any download.
   * @throws DestinationExistsError when `path` exists and `force` is false.
   */
  static async create(path: string, options: { force?: boolean; temps: TempFiles }): Promise<AtomicFile> {
    const target = resolve(path);
    const force = options.force ?? false;
    if (!force && (await exists(target))) throw new DestinationExistsError(path);
    const tempPath = tempPathFor(target);
    // Registered before it exists, so an exit handler never misses it.
    options.temps.add(tempPath);
    const handle = await open(tempPath, "wx").catch((error: unknown) => {
      options.temps.release(tempPath);
      throw error;
    });
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
    if (this.#force) {
      await rename(this.tempPath, this.path);
    } else {
      await this.#placeWithoutClobbering();
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
