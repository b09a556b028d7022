import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, link, mkdir, open, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ApiClient } from "../api/types.js";
import type { ResultRecording } from "../ledger/recording.js";
import { asOutputWriteError } from "../file-system-errors.js";
import { syncFile } from "../results/atomic-file.js";
import { capped } from "../results/result-body.js";
import { checkResult } from "../results/read-results.js";
import { resultBytesBound, uploadedIdentifiers } from "../results/result-rules.js";
import { isRunning } from "../results/temp-files.js";
import { DEFAULT_ZIP_LIMITS } from "../results/unzip.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { Store, TaskRecord } from "../store/store.js";
import { resultLabel } from "../tasks/download.js";
import { resultOpener, withTransferRetries } from "../tasks/fetch-result.js";
import { fileSha256 } from "../tasks/file-sha256.js";
import type { UploadResult } from "../tasks/submit.js";

/**
 * Where every run's staging directory is: under the state directory, or (when the ledger is
 * off, and no file there may hold a number) under the temp directory.
 */
export function stagingRoot(stateDir: string, ledger: boolean): string {
  if (ledger) return join(stateDir, "staging");
  return join(tmpdir(), `bulkcheck-staging-${process.getuid?.() ?? "user"}`);
}

/** A process's own directory inside a run's staging directory: `{pid}-{random}`. */
const OWN_DIR = /^(\d+)-[0-9a-f]+$/;
/** A staged result in a process's directory (its part counted from 1), and one still being downloaded. */
const STAGED_FILE = /^part-(\d+)\.result$/;
const DOWNLOADING_FILE = /^\.part-\d+\.result\.tmp$/;

/** A staged result file, as found on disk. */
export interface StagedFile {
  runId: string;
  /** 0-based, as the run's tasks count their parts. */
  part: number;
  path: string;
}

/**
 * Every staged result a run left under `stateDir`'s staging root or the temp one (with the
 * ledger on or off): each process's copy (one takes another's by hard-linking it into its own
 * directory), whether or not a store records it. A download that a process no longer running
 * left unfinished, which no run ever reads (a continued run downloads afresh), is removed.
 */
export async function stagedFiles(stateDir: string): Promise<StagedFile[]> {
  const found: StagedFile[] = [];
  for (const root of [stagingRoot(stateDir, true), stagingRoot(stateDir, false)]) {
    for (const runId of await readdir(root).catch(() => [])) {
      for (const own of await readdir(join(root, runId)).catch(() => [])) {
        const owner = OWN_DIR.exec(own);
        if (!owner) continue;
        const dir = join(root, runId, own);
        for (const name of await readdir(dir).catch(() => [])) {
          const part = STAGED_FILE.exec(name);
          if (part) found.push({ runId, part: Number(part[1]) - 1, path: join(dir, name) });
          else if (DOWNLOADING_FILE.test(name) && !isRunning(Number(owner[1]))) await rm(join(dir, name), { force: true });
        }
      }
    }
  }
  return found;
}

/**
 * A run's private store of finished results: each task's result file is fetched as
 * soon as the task finishes (result links are time-limited) and kept here until the
 * run's output has been written: under the state directory, or (when the ledger is off,
 * and no file there may hold a number) under the temp directory. It survives a kill: the
 * store records each staged file's path, size and hash with its task, and a re-run
 * reuses a file that still matches instead of downloading it again. Directories are
 * 0700, files 0600.
 *
 * Each process writes only into its own directory inside the run's, and takes a file
 * another process staged by hard-linking it into its own: two runs of the same list at
 * once (overlapping cron jobs) never remove or replace what the other is reading.
 */
export class Staging {
  /** The staged file of each task fetched or reused by this run. */
  readonly #files = new Map<string, string>();

  private constructor(
    /** Where every run's staging directory is. */
    private readonly root: string,
    /** The run's directory, shared by every process working on the same run. */
    readonly dir: string,
    /** This process's directory in it. */
    private readonly own: string,
    private readonly store: Store,
    private readonly runId: string,
  ) {}

  /** The staging directory of a run, under `root`: the run continued later finds it again. */
  static async open(root: string, runId: string, store: Store): Promise<Staging> {
    const dir = join(root, runId);
    const own = join(dir, `${process.pid}-${randomBytes(4).toString("hex")}`);
    await mkdir(own, { recursive: true, mode: 0o700 });
    // mkdir's mode is filtered by the umask and leaves existing directories as they are.
    for (const path of [root, dir, own]) await chmod(path, 0o700);
    return new Staging(root, dir, own, store, runId);
  }

  /**
   * Fetches a finished task's result into staging (whole or not at all), unless a staged
   * copy still checks out. `check` reads the file (the fetched one before it is kept, or
   * the staged copy) and throws when it may not be used.
   */
  async stage(result: UploadResult, open: () => Promise<Readable>, check?: (path: string) => Promise<void>): Promise<"reused" | "fetched"> {
    const { task, upload } = result;
    const name = `part-${upload.index + 1}.result`;
    const path = join(this.own, name);
    this.#files.set(task.id, path);
    if (await this.#reuse(upload.ref, path)) {
      await check?.(path);
      return "reused";
    }
    const temp = join(this.own, `.${name}.tmp`);
    let written: { bytes: number; sha256: string };
    try {
      written = await writeHashed(await open(), temp, task);
      await check?.(temp);
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw asOutputWriteError(error, path);
    }
    await this.store.tasks.update(upload.ref, { staged: { file: path, ...written } });
    return "fetched";
  }

  /** Whether the ledger holds a task's result already (a run killed after recording it, continued). */
  async recorded(ref: number): Promise<boolean> {
    return (await this.store.tasks.ofRun(this.runId)).some((task) => task.ref === ref && task.recordedAt !== undefined);
  }

  /** Where a task's staged result is. */
  path(task: Task): Promise<string> {
    const path = this.#files.get(task.id);
    return path === undefined ? Promise.reject(new Error(`task ${task.id} has no staged result`)) : Promise.resolve(path);
  }

  /** Reads a task's staged result. */
  read(task: Task): Promise<Readable> {
    const path = this.#files.get(task.id);
    if (path === undefined) return Promise.reject(new Error(`task ${task.id} has no staged result`));
    return Promise.resolve(createReadStream(path));
  }

  /**
   * Removes this process's directory and those of processes no longer running, and the
   * run's directory once nothing is left in it (after the merged output is written).
   */
  async remove(): Promise<void> {
    await rm(this.own, { recursive: true, force: true });
    for (const name of await readdir(this.dir).catch(() => [])) {
      const owner = OWN_DIR.exec(name);
      if (owner && !isRunning(Number(owner[1]))) await rm(join(this.dir, name), { recursive: true, force: true });
    }
    await rmdir(this.dir).catch(() => undefined);
  }

  /**
   * Links into `path` the staged copy of a task's result, if the store records one that is
   * still intact (see intactStagedCopy); otherwise it is fetched again.
   */
  async #reuse(ref: number, path: string): Promise<boolean> {
    // Read afresh: another process on the same run may have staged it meanwhile.
    const entry = (await this.store.tasks.ofRun(this.runId)).find((task) => task.ref === ref)?.staged;
    const staged = await intactStagedCopy(this.root, entry);
    if (staged === undefined) return false;
    try {
      if (staged !== path) {
        await rm(path, { force: true });
        await link(staged, path);
      }
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * The staged copy of a task's result that the store records, if its file is still there,
 * under the staging root, with the size and hash recorded (as `forget` leaves it too, having
 * rewritten it). Anything in the way (a file that changed, or that another process removed
 * meanwhile) is undefined: the result is fetched again.
 */
export async function intactStagedCopy(root: string, entry: TaskRecord["staged"]): Promise<string | undefined> {
  if (!entry || relative(root, entry.file).startsWith("..") || !entry.file.startsWith(root + sep)) return undefined;
  try {
    if ((await stat(entry.file)).size !== entry.bytes || (await fileSha256(entry.file)) !== entry.sha256) return undefined;
    return entry.file;
  } catch {
    return undefined;
  }
}

export interface FetchDeps {
  client: Pick<ApiClient, "checkTask" | "openResult">;
  /** The product the tasks were submitted for: how their results are read when checked. */
  product: ServiceType;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** A transfer broke midway and starts again with a fresh link. */
  onRestart?: (error: Error) => void;
  /** A task's result file is not published yet; it is checked again in `delayMs`. */
  onWait?: (taskId: string, delayMs: number) => void;
  /** Where the result goes once staged and checked; absent when the ledger is off. */
  ledger?: ResultRecording;
}

/**
 * Stages a task's result with the link of the check that saw it finished; a transfer
 * that breaks starts again with a fresh link (checked again), up to three times. The
 * part's upload file still exists here, so the result is checked against the numbers
 * the task was given, as well as by every other rule (result-rules.ts), before it is
 * kept; then, unless the ledger is off or has it already, it is recorded in the ledger.
 */
export async function fetchToStaging(deps: FetchDeps, staging: Staging, result: UploadResult): Promise<"reused" | "fetched"> {
  const { client, sleep, signal, onWait, product } = deps;
  const open = resultOpener(result.task, { client, sleep, signal, ...(onWait ? { onWait } : {}) });
  const uploaded = await uploadedIdentifiers(result.upload.path);
  const source = (path: string) => ({
    label: resultLabel(result.task.id),
    task: result.task,
    uploaded,
    open: () => Promise.resolve(createReadStream(path)),
  });
  const options = { serviceType: product, ...(signal ? { signal } : {}) };
  const how = await withTransferRetries(() => staging.stage(result, open, (path) => checkResult(source(path), options)), deps);
  // Recorded from the staged file by a worker, which parses it once more (the check above kept nothing of it).
  if (deps.ledger && !(await staging.recorded(result.upload.ref))) {
    const { task, upload } = result;
    await deps.ledger.recordFile({ taskRef: upload.ref, product, task, label: resultLabel(task.id) }, await staging.path(task));
  }
  return how;
}

/** Writes `task`'s result from `source` to a new file at `path`, at most the bytes its numbers' rows can take. */
async function writeHashed(source: Readable, path: string, task: Task): Promise<{ bytes: number; sha256: string }> {
  const max = resultBytesBound(task.total, task.product, DEFAULT_ZIP_LIMITS.maxUncompressedBytes);
  const hash = createHash("sha256");
  let bytes = 0;
  const handle = await open(path, "wx", 0o600);
  await pipeline(
    source,
    // Staged before it is read: bounded as a download is (see resultBytesBound).
    (chunks: AsyncIterable<Buffer>) => capped(chunks, { max, numbers: task.total, label: resultLabel(task.id) }),
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        bytes += chunk.length;
        yield chunk;
      }
    },
    handle.createWriteStream(),
  );
  // Synced once whole (see syncFile): an endless body stopped by its bound or a --timeout is removed unsynced.
  await syncFile(path);
  return { bytes, sha256: hash.digest("hex") };
}
