import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, link, mkdir, open, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ApiClient } from "../api/types.js";
import type { Journal, StagedEntry } from "../journal/journal.js";
import { asOutputWriteError } from "../results/errors.js";
import { capped } from "../results/body.js";
import { checkResult } from "../results/read-results.js";
import { uploadedIdentifiers } from "../results/result-rules.js";
import { isRunning } from "../results/temp-files.js";
import { DEFAULT_ZIP_LIMITS } from "../results/zip-limits.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { resultLabel } from "./download.js";
import { resultOpener, withTransferRetries } from "./fetch-result.js";
import { fileSha256 } from "./file-sha256.js";
import type { UploadResult } from "./submit.js";

/** A process's own directory inside a run's staging directory: `{pid}-{random}`. */
const OWN_DIR = /^(\d+)-[0-9a-f]+$/;
/** What a staged entry's `file` may be: a part's file in some process's own directory. */
const STAGED_FILE = /^\d+-[0-9a-f]+\/part-\d+\.result$/;

/**
 * A run's private store of finished results: each task's result file is fetched as
 * soon as the task finishes (result links are time-limited) and kept here, under the
 * state directory, until the merged output has been written. It survives a kill: the
 * journal records each staged file's size and hash, and a re-run reuses a file that
 * still matches instead of downloading it again. Directories are 0700, files 0600.
 *
 * Each process writes only into its own directory inside the run's, and takes a file
 * another process staged by hard-linking it into its own: two runs of the same list at
 * once (overlapping cron jobs) never remove or replace what the other is reading.
 */
export class Staging {
  /** The staged file of each task fetched or reused by this run. */
  readonly #files = new Map<string, string>();

  private constructor(
    /** The run's directory, shared by every process working on the same list. */
    readonly dir: string,
    /** This process's directory in it. */
    private readonly own: string,
    private readonly journal: Journal,
    private readonly now: () => number,
  ) {}

  /**
   * The staging directory of the run whose parts have these idempotency keys, under
   * `root`: the same list re-run finds it again, another list (or --resubmit) gets its own.
   */
  static async open(root: string, keys: readonly string[], journal: Journal, now: () => number): Promise<Staging> {
    const dir = join(root, createHash("sha256").update(keys.join("\n")).digest("hex").slice(0, 32));
    const own = join(dir, `${process.pid}-${randomBytes(4).toString("hex")}`);
    await mkdir(own, { recursive: true, mode: 0o700 });
    // mkdir's mode is filtered by the umask and leaves existing directories as they are.
    for (const path of [root, dir, own]) await chmod(path, 0o700);
    return new Staging(dir, own, journal, now);
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
    if (await this.#reuse(task.id, path)) {
      await check?.(path);
      return "reused";
    }
    const temp = join(this.own, `.${name}.tmp`);
    let written: { bytes: number; sha256: string };
    try {
      written = await writeHashed(await open(), temp);
      await check?.(temp);
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw asOutputWriteError(error, path);
    }
    const entry: StagedEntry = {
      type: "staged",
      at: new Date(this.now()).toISOString(),
      idempotency_key: upload.idempotencyKey,
      task_id: task.id,
      file: relative(this.dir, path),
      ...written,
    };
    await this.journal.append(entry);
    return "fetched";
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
   * Links into `path` the staged copy of a task's result, if the journal records one
   * whose file is still there with its size and hash. Anything in the way (a file that
   * changed, or that another run removed meanwhile) means it is fetched again.
   */
  async #reuse(taskId: string, path: string): Promise<boolean> {
    // Read afresh: another run of the same list may have staged it meanwhile.
    const entry = (await this.journal.stagedResults()).get(taskId);
    if (!entry || !STAGED_FILE.test(entry.file)) return false;
    const staged = join(this.dir, entry.file);
    try {
      if ((await stat(staged)).size !== entry.bytes || (await fileSha256(staged)) !== entry.sha256) return false;
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
}

/**
 * Stages a task's result with the link of the check that saw it finished; a transfer
 * that breaks starts again with a fresh link (checked again), up to three times. The
 * part's upload file still exists here, so the result is checked against the numbers
 * the task was given, as well as by every other rule (result-rules.ts), before it is kept.
 */
export async function fetchToStaging(deps: FetchDeps, staging: Staging, result: UploadResult): Promise<"reused" | "fetched"> {
  const { client, sleep, signal, onWait, product } = deps;
  const open = resultOpener(result.task, { client, sleep, signal, ...(onWait ? { onWait } : {}) });
  const uploaded = await uploadedIdentifiers(result.upload.path);
  const check = (path: string) =>
    checkResult(
      { label: resultLabel(result.task.id), task: result.task, uploaded, open: () => Promise.resolve(createReadStream(path)) },
      { serviceType: product, ...(signal ? { signal } : {}) },
    );
  return withTransferRetries(() => staging.stage(result, open, check), deps);
}

async function writeHashed(source: Readable, path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  const handle = await open(path, "wx", 0o600);
  await pipeline(
    source,
    // Staged before it is read: bounded as a download is (see capped).
    (chunks: AsyncIterable<Buffer>) => capped(chunks, DEFAULT_ZIP_LIMITS.maxUncompressedBytes),
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        bytes += chunk.length;
        yield chunk;
      }
    },
    handle.createWriteStream({ flush: true }),
  );
  return { bytes, sha256: hash.digest("hex") };
}
