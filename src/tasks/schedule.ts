import { RetryStreak } from "../api/attempts.js";
import { ApiError } from "../api/errors.js";
import { STATUS_CHECK_POLICY } from "../api/retry-policies.js";
import type { ApiClient } from "../api/types.js";
import { InterruptedError, type BulkcheckError, type PendingError } from "../errors.js";
import { ApiCode } from "../spec/codes.js";
import { DEFAULT_LIMITS } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { CheckPlan } from "./check-schedule.js";
import { QuotaGate } from "./quota-gate.js";
import { interrupted, quotaExhausted, timedOut } from "./schedule-outcomes.js";
import { WakeTimer } from "./wake-timer.js";
import type { PlannedUpload, UploadResult } from "./submit.js";
import { failedTasksError, isFinished, jittered } from "./wait.js";

/** What the schedule tells its caller as it goes (for progress). */
export type ScheduleEvent =
  /** A part has its task: created now, returned for its key, or found in the journal and checked. */
  | { type: "uploaded"; result: UploadResult }
  /** A task was checked again. */
  | { type: "checked"; upload: PlannedUpload; task: Task }
  /** 42900 while some of this run's tasks are unfinished: the next upload waits for one of them to finish. */
  | { type: "quota" }
  /** A check failed with a passing condition; it is tried again at the next interval. */
  | { type: "check-failed"; taskId: string; error: BulkcheckError };

export interface ScheduleOptions {
  client: Pick<ApiClient, "checkTask">;
  uploads: readonly PlannedUpload[];
  /** Uploads one part (its key is in the store already) and returns its task. */
  upload: (upload: PlannedUpload) => Promise<UploadResult>;
  now: () => number;
  /** Uploads at once (the service's request slots). */
  maxInFlight: number;
  /**
   * Time between two checks of one task (the polling floor, or --interval). At the service's
   * floor, each task's checks follow a CheckPlan aimed at its foreseen finish; any other
   * interval (a local sandbox's, or a longer one asked for) is kept as given, with jitter.
   */
  pollIntervalMs: number;
  /** Keep checking until every task has finished (--wait); otherwise stop once every part is uploaded. */
  untilFinished: boolean;
  /**
   * Whether other tasks of the same command are unfinished (a chain's runs part by part, beside
   * its first product's): a 42900 with none of this run's tasks unfinished then waits for their
   * room, trying again each interval, instead of ending the run.
   */
  roomWillCome?: () => boolean;
  /**
   * With untilFinished, failed tasks are returned with the others (in their final state)
   * instead of ending the schedule in TaskFailedError: the caller uses what the others answered.
   */
  returnFailed?: boolean;
  /** Give up after this long (PendingError); undefined never gives up. */
  timeoutMs?: number;
  /** The --timeout named when it runs out (timeoutMs may be what is left of it). */
  timeoutSeconds?: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  signal?: AbortSignal;
  /** The command that carries on from the journal where this run stopped, for the hints of errors. */
  resumeCommand: string;
  /** Whether `bulkcheck wait IDS` is enough to resume once every part is uploaded (no output to write). */
  waitResumes: boolean;
  onEvent?: (event: ScheduleEvent) => void;
  /**
   * Called once for each task seen succeeded, e.g. to fetch its result while the link is
   * fresh. It runs beside the schedule, which waits for it before returning; its failure
   * stops the schedule like a failed upload.
   */
  onSucceeded?: (result: UploadResult) => Promise<void>;
}

interface Part {
  readonly upload: PlannedUpload;
  /** The part's task, in its latest known state. */
  result?: UploadResult;
  finished: boolean;
  /** When the task may be checked next. */
  dueAt: number;
  /** Its checks that failed in a row, under the status-check policy. */
  readonly failedChecks: RetryStreak;
}

/**
 * The timeout, held as the run's failure until the run ends: uploads under way when the
 * time ran out are still recorded, so what is left is counted only then.
 */
const TIME_UP = Symbol("time up");

/**
 * Uploads the parts of a list and, when asked, waits for their tasks; returns each
 * part's task (in its latest state) in list order.
 *
 * At most `maxInFlight` uploads run at once. A 42900 (too many unfinished tasks) while
 * some of this run's tasks are unfinished is not a failure: the part waits until one of
 * them finishes, each checked once per interval (see QuotaGate); only a 42900 with none
 * of them unfinished ends the run, with the command that resumes it. A task the journal
 * already holds for a part is checked, not uploaded again (one the service does not know
 * is uploaded again under the same key). After any other failure no new upload starts;
 * what is running finishes, then the failure is thrown.
 */
export async function scheduleParts(options: ScheduleOptions): Promise<UploadResult[]> {
  return new Schedule(options).run();
}

class Schedule {
  readonly #parts: Part[];
  /** Parts without a task and no upload running, in list order. */
  readonly #pending: Part[] = [];
  /** Uploads and result fetches under way. */
  readonly #running = new Set<Promise<void>>();
  readonly #quota = new QuotaGate();
  readonly #timer: WakeTimer;
  readonly #deadline: number;
  readonly #plan: CheckPlan | undefined;
  /** Tasks seen succeeded whose results are fetched once the uploads their finishing let go have started. */
  readonly #succeeded: UploadResult[] = [];
  #uploading = 0;
  #failure: { error: unknown } | undefined;
  #lastRefusal: ApiError | undefined;
  /** Whether the caller has been told that the run waits for room at the service. */
  #announced = false;

  constructor(private readonly o: ScheduleOptions) {
    this.#parts = o.uploads.map((upload) => ({ upload, finished: false, dueAt: 0, failedChecks: new RetryStreak(STATUS_CHECK_POLICY, o) }));
    this.#timer = new WakeTimer(o.sleep, o.now);
    this.#deadline = o.timeoutMs === undefined ? Infinity : o.now() + o.timeoutMs;
    this.#plan = o.pollIntervalMs === DEFAULT_LIMITS.pollFloorSeconds * 1000 ? new CheckPlan(o.pollIntervalMs) : undefined;
  }

  async run(): Promise<UploadResult[]> {
    const { o } = this;
    const interrupt = () => this.#timer.cancel();
    o.signal?.addEventListener("abort", interrupt, { once: true });
    try {
      this.#findKnown();
      while (await this.#turn());
    } catch (error) {
      this.#fail(error);
    } finally {
      o.signal?.removeEventListener("abort", interrupt);
      this.#timer.cancel();
      this.#fetchSucceeded();
      await Promise.all(this.#running);
    }
    if (this.#failure) {
      if (o.signal?.aborted) throw interrupted(o.resumeCommand);
      throw this.#failure.error === TIME_UP ? this.#timedOut() : this.#failure.error;
    }
    const results = this.#parts.map((part) => part.result!);
    const failed = results.filter((result) => result.task.status === "failed").map((result) => result.task.id);
    if (o.untilFinished && !o.returnFailed && failed.length > 0) throw failedTasksError(failed);
    return results;
  }

  /** Parts with a task already (checked by the caller) are followed; the others wait their turn. */
  #findKnown(): void {
    for (const part of this.#parts) {
      const task = part.upload.knownTask;
      if (task) this.#record(part, { upload: part.upload, task, replayed: true });
      else this.#pending.push(part);
    }
  }

  /** Starts what may start, then waits for an upload or fetch to end or a check to be due. False once done. */
  async #turn(): Promise<boolean> {
    const { o } = this;
    if (o.signal?.aborted) this.#fail(new InterruptedError());
    if (this.#failure) return false;
    while (this.#pending.length > 0 && this.#uploading < o.maxInFlight && this.#quota.tryStart()) this.#upload(this.#pending.shift()!);
    this.#fetchSucceeded();
    const unfinished = this.#unfinished();
    const waitingForRoom = this.#pending.length > 0 && this.#quota.closed;
    if (!waitingForRoom) {
      this.#announced = false;
    } else if (!this.#announced && unfinished.length > 0) {
      this.#announced = true;
      o.onEvent?.({ type: "quota" });
    }
    if (this.#pending.length === 0 && this.#running.size === 0 && (!o.untilFinished || unfinished.length === 0)) return false;
    if (waitingForRoom && this.#uploading === 0 && unfinished.length === 0) {
      if (!o.roomWillCome?.()) {
        this.#fail(quotaExhausted(this.#lastRefusal!, o.resumeCommand));
        return false;
      }
      if (o.now() >= this.#deadline) {
        this.#fail(TIME_UP);
        return false;
      }
      await this.#timer.until(Math.min(o.now() + o.pollIntervalMs, this.#deadline));
      this.#quota.retry();
      return true;
    }
    if (o.now() >= this.#deadline) {
      this.#fail(TIME_UP);
      return false;
    }
    const checking = o.untilFinished || waitingForRoom;
    const checkAt = Math.min(...(checking ? unfinished.map((part) => part.dueAt) : []));
    // While uploads or fetches run, the deadline waits for them (requests have deadlines of their own).
    const wakeAt = Number.isFinite(checkAt) || this.#running.size === 0 ? Math.min(checkAt, this.#deadline) : Infinity;
    await Promise.race([...this.#running, ...(Number.isFinite(wakeAt) ? [this.#timer.until(wakeAt)] : [])]);
    if (checking) await this.#checkDue();
    return true;
  }

  #upload(part: Part): void {
    this.#uploading++;
    const job = this.o.upload(part.upload).then(
      (result) => this.#record(part, result),
      (error: unknown) => {
        if (!(error instanceof ApiError) || error.apiCode !== ApiCode.QUOTA_EXHAUSTED) throw error;
        this.#lastRefusal = error;
        this.#quota.refused();
        this.#pending.push(part);
        this.#pending.sort((a, b) => a.upload.index - b.upload.index);
      },
    );
    this.#track(job.finally(() => this.#uploading--));
  }

  #record(part: Part, result: UploadResult): void {
    part.result = result;
    // A task this run did not create now (its key's, or the journal's) may have begun long ago: its size foretells nothing.
    if (!isFinished(result.task)) this.#plan?.follow(result.task.id, result.replayed ? undefined : part.upload.count, this.o.now());
    part.dueAt = this.#nextCheck(part);
    this.o.onEvent?.({ type: "uploaded", result });
    this.#noteState(part, result.task);
  }

  /** A task's latest state; the first time it is seen finished, it makes room for an upload and its result may be fetched. */
  #noteState(part: Part, task: Task): void {
    part.result = { ...part.result!, task };
    if (!isFinished(task) || part.finished) return;
    part.finished = true;
    this.#quota.taskFinished();
    if (task.status === "success" && this.o.onSucceeded) this.#succeeded.push(part.result);
  }

  async #checkDue(): Promise<void> {
    for (const part of this.#unfinished()) {
      if (part.dueAt > this.o.now() || this.#failure) continue;
      const id = part.result!.task.id;
      const sentAt = this.o.now();
      try {
        const task = await this.o.client.checkTask(id);
        part.failedChecks.succeeded();
        this.#plan?.checked(id, sentAt, this.o.now(), isFinished(task));
        this.#noteState(part, task);
        this.o.onEvent?.({ type: "checked", upload: part.upload, task });
      } catch (error) {
        this.#plan?.checked(id, sentAt, this.o.now(), undefined);
        try {
          part.failedChecks.failed(error);
        } catch (final) {
          this.#fail(final);
          return;
        }
        this.o.onEvent?.({ type: "check-failed", taskId: id, error: error as BulkcheckError });
      }
      part.dueAt = this.#nextCheck(part);
    }
  }

  /**
   * Fetches the results of the tasks seen succeeded, once the uploads their finishing let go
   * have started: the next part's upload reaches the service before the result request,
   * and the service is then busy with the result file, not with it.
   */
  #fetchSucceeded(): void {
    for (const result of this.#succeeded.splice(0)) this.#track(this.o.onSucceeded!(result));
  }

  #timedOut(): PendingError {
    const processing = this.#unfinished().map((part) => part.result!.task.id);
    const notUploaded = this.#parts.filter((part) => !part.result).length;
    return timedOut(this.o, { parts: this.#parts.length, notUploaded, processing });
  }

  #unfinished(): Part[] {
    return this.#parts.filter((part) => part.result && !part.finished);
  }

  #nextCheck(part: Part): number {
    if (this.#plan && !part.finished && !isFinished(part.result!.task)) return this.#plan.nextCheck(part.result!.task.id);
    return this.o.now() + jittered(this.o.pollIntervalMs, this.o.random);
  }

  #track(job: Promise<void>): void {
    const tracked: Promise<void> = job.catch((error: unknown) => this.#fail(error)).finally(() => this.#running.delete(tracked));
    this.#running.add(tracked);
  }

  #fail(error: unknown): void {
    this.#failure ??= { error };
  }
}
