import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline, Transform, type Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { operationSignal } from "../operation-signal.js";
import type { ResultRecorder } from "../results/read-results.js";
import { removeStaleTempFiles, tempPathFor } from "../results/temp-files.js";
import type { ConnectionEnv } from "../store/open.js";
import {
  failureFrom,
  GrowingFile,
  recordResultFile,
  type FailureMessage,
  type RecordingJob,
  type RecordingStore,
} from "./record-result-file.js";

/** What the main thread tells a recording worker (see record-worker.ts). */
export type ToRecording = { grew: number } | { completed: number } | { insert: string } | { stop: string };
/** What a recording worker answers. */
export type FromRecording = { collected: true } | { recorded: number } | { failed: FailureMessage };

/** A task's result to record, without where its file is. */
export type ResultToRecord = Omit<RecordingJob, "store" | "path">;

/** Where a download's copy of a result waits for its recording (the OS temp directory, as a zip spooled to be read does). */
const DOWNLOAD_COPY = join(tmpdir(), "bulkcheck-recording");

/**
 * Recording results into the ledger off the main thread: each task's result is parsed, sorted
 * and inserted by a worker thread with its own database connection (record-worker.ts), from
 * a file: a result staged whole, or the copy a download writes as it reads the result for its
 * output (which copies the CSV through unparsed). The main thread only passes messages, so it
 * never waits on the database; recordings insert one at a time, in the order they started.
 *
 * Running from TypeScript sources (vitest), where no compiled worker exists, the same work is
 * done in this thread.
 */
export class ResultRecording {
  readonly #running = new Set<Recording>();
  /** The recording whose turn it is to insert ends this chain. */
  #turns: Promise<unknown> = Promise.resolve();
  #staleRemoved: Promise<unknown> | undefined;
  /** Each recording's copy removed once it is done. */
  readonly #cleanUps: Promise<void>[] = [];

  constructor(
    private readonly deps: {
      /** The store as configured: a team's URL with its password is handed to the worker, never shown. */
      location: string;
      env: ConnectionEnv;
      now: () => number;
      /** Ctrl-C, SIGTERM or --timeout: a recording still connecting to a team's store stops connecting. */
      signal: AbortSignal;
    },
  ) {}

  /** Records a result file that is whole (a staged one). Resolves with the rows recorded once they are committed. */
  async recordFile(result: ResultToRecord, path: string): Promise<number> {
    const { size } = await stat(path);
    // Complete from its start: a `settle` meanwhile (another result's download) waits for it rather than stopping it.
    const recording = this.#start({ ...result, path }, false);
    recording.completed(size);
    return recording.done;
  }

  /**
   * A recorder for a result being downloaded (see ResultRecorder): its bytes are copied to a
   * private temp file as they pass, which a worker parses meanwhile; once the result was read
   * whole and kept to the rules, it is recorded (`settle` waits for it). A transfer that starts
   * again abandons the copy and starts another.
   */
  async recorder(result: ResultToRecord): Promise<ResultRecorder> {
    await this.#removeStaleCopies();
    let current: { recording: Recording; copy: WriteStream; copied: () => number } | undefined;
    return {
      watch: (body: Readable) => {
        current?.recording.abandon();
        const path = tempPathFor(DOWNLOAD_COPY, ".csv");
        const copy = createWriteStream(path, { flags: "wx", mode: 0o600 });
        const recording = this.#start({ ...result, path }, true);
        let copied = 0;
        current = { recording, copy, copied: () => copied };
        const tee = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            const more = copy.write(chunk, (error) => {
              if (error) return;
              copied += chunk.length;
              recording.grew(copied);
            });
            if (more) done(null, chunk);
            else copy.once("drain", () => done(null, chunk));
          },
        });
        copy.on("error", (error) => tee.destroy(error));
        // A reading that stopped short (a failure, the reader gone) leaves the copy unfinished: closed here, its recording abandoned.
        tee.on("close", () => {
          if (!tee.writableFinished) copy.destroy();
        });
        // The body's failure (a transfer broken off) reaches the reader through the copy.
        return pipeline(body, tee, () => undefined);
      },
      finish: async () => {
        if (!current) return;
        const { recording, copy, copied } = current;
        await new Promise<void>((resolve, reject) => copy.end((error?: Error | null) => (error ? reject(error) : resolve())));
        recording.completed(copied());
      },
    };
  }

  /**
   * Once the results are read: waits for every recording of a result read whole, and stops
   * those of results that never will be (a download that failed or was interrupted).
   * @throws the first recording's failure.
   */
  async settle(): Promise<void> {
    const running = [...this.#running];
    for (const recording of running) if (!recording.isComplete) recording.abandon();
    const outcomes = await Promise.allSettled(running.map((recording) => recording.done));
    await Promise.all(this.#cleanUps.splice(0));
    await this.#removeStaleCopies();
    const failed = outcomes.find((outcome, at) => outcome.status === "rejected" && running[at]!.isComplete);
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  /** Copies of results that killed processes left (recognisable by their names), removed once per command that records. */
  #removeStaleCopies(): Promise<unknown> {
    return (this.#staleRemoved ??= removeStaleTempFiles(DOWNLOAD_COPY));
  }

  /** Starts recording from `job.path`: a download's `copy`, removed once done, or a staged file. */
  #start(job: Omit<RecordingJob, "store">, copy: boolean): Recording {
    const store: RecordingStore = { location: this.deps.location, env: this.deps.env };
    const recording = new Recording({ ...job, store }, this.deps.signal);
    this.#running.add(recording);
    const previous = this.#turns;
    this.#turns = (async () => {
      await previous;
      if (!(await recording.collected)) return;
      recording.insert(new Date(this.deps.now()).toISOString());
      await recording.done.catch(() => undefined);
    })();
    this.#cleanUps.push(
      recording.done
        .catch(() => undefined)
        .then(async () => {
          this.#running.delete(recording);
          // A download's copy goes once recorded; a staged file stays the run's.
          if (copy) await rm(job.path, { force: true });
        }),
    );
    return recording;
  }
}

/** The compiled worker next to this module, or undefined when running from TypeScript sources (vitest). */
function workerScript(): URL | undefined {
  const url = new URL("./record-worker.js", import.meta.url);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

/** One result's recording, in a worker (or, from sources, in this thread). */
class Recording {
  /** Whether its rows are collected and waiting for their turn; false when it failed or was abandoned first. */
  readonly collected: Promise<boolean>;
  /** The rows recorded, once committed. */
  readonly done: Promise<number>;
  #complete = false;
  readonly #send: (message: ToRecording) => void;
  readonly #stop: () => void;

  constructor(job: RecordingJob, signal: AbortSignal) {
    let collected!: (value: boolean) => void;
    this.collected = new Promise((resolve) => (collected = resolve));
    const operation = operationSignal(signal);
    const script = workerScript();
    if (script === undefined) {
      const file = new GrowingFile(job.path);
      let insert!: (at: string) => void;
      const turn = new Promise<string>((resolve) => (insert = resolve));
      this.#send = (message) => {
        if ("grew" in message) file.grew(message.grew);
        else if ("completed" in message) file.completed(message.completed);
        else if ("insert" in message) insert(message.insert);
      };
      this.#stop = () => file.abandoned();
      this.done = recordResultFile(
        job,
        file,
        () => {
          collected(true);
          return turn;
        },
        operation.signal,
      );
    } else {
      const worker = new Worker(script, { workerData: job });
      this.#send = (message) => worker.postMessage(message);
      let stop!: (error: Error) => void;
      this.#stop = () => {
        stop(new Error("the recording was abandoned"));
        void worker.terminate();
      };
      this.done = new Promise<number>((resolve, reject) => {
        stop = reject;
        worker.on("message", (message: FromRecording) => {
          if ("collected" in message) return collected(true);
          if ("recorded" in message) resolve(message.recorded);
          else reject(failureFrom(message.failed));
          void worker.terminate();
        });
        worker.on("error", reject);
        worker.on("exit", () => reject(new Error("the recording worker stopped before it finished")));
      });
      // The worker's connection is its own: it is told to stop connecting (a message, so a write under way ends whole).
      const stopConnecting = () => this.#send({ stop: String((operation.signal.reason as Error | undefined)?.message) });
      if (operation.signal.aborted) stopConnecting();
      else operation.signal.addEventListener("abort", stopConnecting, { once: true });
    }
    this.done.then(operation.release, operation.release);
    this.done.catch(() => collected(false));
  }

  get isComplete(): boolean {
    return this.#complete;
  }

  grew(bytes: number): void {
    this.#send({ grew: bytes });
  }

  completed(bytes: number): void {
    this.#complete = true;
    this.#send({ completed: bytes });
  }

  insert(at: string): void {
    this.#send({ insert: at });
  }

  abandon(): void {
    this.#stop();
  }
}
