import { constants, createWriteStream, open as openFd } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { Socket } from "node:net";
import { promisify } from "node:util";
import { basename, extname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { UsageError } from "../errors.js";
import { asOutputWriteError } from "../file-system-errors.js";

/** A list file: a path, or a stream such as stdin (`name` is used in messages and to read the extension). */
export type ListSource = string | { stream: NodeJS.ReadableStream; name?: string };

/** A list on disk, and the name messages call it by (the path, or "stdin" for a spooled stream). */
export interface ListFile {
  path: string;
  name: string;
}

export interface OpenedSource {
  /** The path as given, or the stream's name ("stdin" when it has none). */
  name: string;
  /** Lower-case extension without the dot (`csv`, `txt`, `tsv`), or "" when there is none. */
  extension: string;
  /** Size in bytes when known (files), to decide whether the list is worth a worker pool. */
  size: number | undefined;
  bytes: AsyncIterable<Uint8Array>;
  /** Stops reading, and resolves once the file is closed (ending an iteration of `bytes` closes it only later). */
  close(): Promise<void>;
}

/**
 * 64 KiB. Larger reads decode to strings V8 allocates outside the young generation,
 * which only a full collection frees: 512 KiB reads left ~40 MB of such garbage at
 * the peak of a 1.6M-number list and were no faster.
 */
const READ_CHUNK_BYTES = 1 << 16;

/**
 * A list as a file that can be read more than once: a path as it is, a stream
 * (stdin) or a named pipe (a FIFO, or process substitution's /dev/fd/N) copied
 * first into `dir` (which the caller keeps private and removes), readable only by
 * its owner. Preparation may read a list twice (once to learn its encoding and its
 * convention for bare digits, once more when that changes how rows read), and a
 * pipe can be read only once. A pipe that stays open or has no writer yet (a
 * producer that stalls) is given up when `signal` aborts, rejecting with its reason.
 */
export async function listFile(source: ListSource, dir: string, signal?: AbortSignal): Promise<ListFile> {
  if (typeof source === "string") {
    if (!(await isPipe(source))) return { path: source, name: source };
    return spool({ stream: await openPipe(source), name: source }, dir, signal);
  }
  return spool(source, dir, signal);
}

async function spool(source: { stream: NodeJS.ReadableStream; name?: string }, dir: string, signal?: AbortSignal): Promise<ListFile> {
  const name = source.name ?? "stdin";
  const path = join(dir, `spooled${extname(basename(name))}`);
  const spool = createWriteStream(path, { mode: 0o600, flags: "wx" });
  try {
    await pipeline(source.stream, spool, { signal });
  } catch (error) {
    // pipeline rejects with an AbortError; the caller tells a timeout from Ctrl-C by the reason.
    signal?.throwIfAborted();
    // The copy's own refusals (no space, a quota) name it; a stream that failed is its own story.
    throw spool.errored ? asOutputWriteError(error, path) : error;
  }
  return { path, name };
}

/** Whether `path` is a named pipe or a socket: a stream that reading empties. */
async function isPipe(path: string): Promise<boolean> {
  const stats = await stat(path).catch(() => undefined);
  return Boolean(stats?.isFIFO() || stats?.isSocket());
}

/**
 * Refuses (exit 2) a pipe (a FIFO, process substitution's /dev/fd/N) as a list that `flag`
 * reads again (a join reads the source once more when the results are in, and checks that
 * it is the file submitted): reading a pipe empties it.
 */
export async function assertReadableTwice(path: string, flag: string): Promise<void> {
  if (!(await isPipe(path))) return;
  throw new UsageError(`${path} is a pipe, which can be read only once; ${flag} needs the list as a file it can read again.`, {
    hint: "Save the list to a file and pass that file's path.",
  });
}

/** A descriptor this process was handed, by its path: process substitution's /dev/fd/63. */
const DESCRIPTOR_PATH = /^\/(?:dev|proc\/self)\/fd\/(\d+)$/;

/**
 * A pipe's reading end as a stream. A descriptor this process was handed is read as it
 * is (a socket cannot be opened again by its path); any other pipe is opened
 * non-blocking, so that the open itself never waits (a blocking open waits for a writer
 * on a thread no signal reaches, and held the process forever). The stream then waits
 * for the writer's data on the event loop, where destroying it (an abort) ends the wait.
 */
async function openPipe(path: string): Promise<Socket> {
  try {
    const handed = DESCRIPTOR_PATH.exec(path)?.[1];
    const fd = handed === undefined ? await promisify(openFd)(path, constants.O_RDONLY | constants.O_NONBLOCK) : Number(handed);
    return new Socket({ fd, readable: true, writable: false });
  } catch (error) {
    throw pathError(path, error);
  }
}

/**
 * Opens a list file for reading. A missing path, a directory or an unreadable file
 * is the user's mistake, so it is a `UsageError` that says which, never a stack trace.
 */
export async function openSource(file: string | ListFile): Promise<OpenedSource> {
  const { path, name } = typeof file === "string" ? { path: file, name: file } : file;
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw pathError(name, error);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw pathError(name, Object.assign(new Error("is a directory"), { code: "EISDIR" }));
    const stream = handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES });
    const close = async () => {
      if (stream.closed) return;
      // Whatever ended the reading (an abort, an error already reported to the reader), the descriptor is closed just before "close".
      const closed = new Promise<void>((resolve) => stream.once("close", () => resolve()));
      stream.destroy();
      await closed;
    };
    return { name, extension: extensionOf(name), size: stats.size, bytes: stream as AsyncIterable<Uint8Array>, close };
  } catch (error) {
    await handle.close();
    throw error instanceof UsageError ? error : pathError(name, error);
  }
}

const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * Whether a file starts as a zip archive does (an .xlsx is one), judged by its first
 * bytes; false when it cannot be read (openSource then says why).
 */
export async function startsLikeZip(path: string): Promise<boolean> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, "r");
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(ZIP_SIGNATURE.length), 0, ZIP_SIGNATURE.length, 0);
    return bytesRead === ZIP_SIGNATURE.length && buffer.equals(ZIP_SIGNATURE);
  } catch {
    return false;
  } finally {
    await handle?.close();
  }
}

function extensionOf(name: string): string {
  return extname(basename(name)).slice(1).toLowerCase();
}

function pathError(path: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return new UsageError(`No such file: ${path}.`, { hint: "Check the path of the list file.", cause: error });
    case "EISDIR":
      return new UsageError(`${path} is a directory, not a list file.`, { hint: "Pass the path of a .csv or .txt file.", cause: error });
    case "EACCES":
    case "EPERM":
      return new UsageError(`Cannot read ${path}: permission denied.`, { hint: "Check the file's permissions.", cause: error });
    default:
      return new UsageError(`Cannot read ${path}: ${(error as Error | undefined)?.message ?? String(error)}.`, { cause: error });
  }
}
