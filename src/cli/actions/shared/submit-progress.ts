import { formatDuration } from "../../../api/attempts.js";
import { count } from "../../../format-count.js";
import type { Task } from "../../../spec/task.js";
import type { ScheduleEvent } from "../../../tasks/schedule.js";
import type { PlannedUpload } from "../../../tasks/submit.js";

/** What progress needs of a part: its place in the run and how many numbers it holds. */
export type Part = Pick<PlannedUpload, "index" | "count">;
import { isFinished } from "../../../tasks/wait.js";
import type { Context } from "../../context.js";
import { createProgress, spinnerAllowed } from "../../progress.js";
import { describeTask } from "../../task-view.js";

/**
 * What a scheduled submit has done so far, as one line: parts uploaded, processing and
 * finished, numbers checked, and the time left at this run's own pace (numbers in the
 * tasks that finished during this run, per second since it started).
 */
export class SubmitTally {
  readonly #counts: ReadonlyMap<number, number>;
  readonly #numbers: number;
  readonly #tasks = new Map<number, Task>();
  /** Numbers of the parts whose tasks finished while this run watched. */
  #finishedHere = 0;

  constructor(
    uploads: readonly Part[],
    private readonly startedAt: number,
  ) {
    this.#counts = new Map(uploads.map((upload) => [upload.index, upload.count]));
    this.#numbers = uploads.reduce((sum, upload) => sum + upload.count, 0);
  }

  /** Takes in a task's state; a part's first state counts as finished here only if the run saw it processing. */
  see(index: number, task: Task): void {
    const before = this.#tasks.get(index);
    if (before && !isFinished(before) && isFinished(task)) this.#finishedHere += this.#counts.get(index) ?? 0;
    this.#tasks.set(index, task);
  }

  /** The tally; with `estimate`, the time left when there is one to give. */
  line(now: number, estimate = true): string {
    const tasks = [...this.#tasks.values()];
    const finished = tasks.filter(isFinished);
    const checked = finished.reduce((sum, task) => sum + (task.success_cnt ?? 0), 0);
    const parts = this.#counts.size;
    const head = `${count(tasks.length)} of ${count(parts)} part${parts === 1 ? "" : "s"} uploaded (${count(tasks.length - finished.length)} processing, ${count(finished.length)} finished); ${count(checked)} of ${count(this.#numbers)} numbers checked`;
    const left = estimate ? this.#timeLeft(now) : undefined;
    return left === undefined ? head : `${head}; about ${formatDuration(Math.max(left, 1000))} left`;
  }

  #timeLeft(now: number): number | undefined {
    const elapsed = now - this.startedAt;
    if (this.#finishedHere === 0 || elapsed <= 0) return undefined;
    const done = [...this.#tasks].filter(([, task]) => isFinished(task)).reduce((sum, [index]) => sum + (this.#counts.get(index) ?? 0), 0);
    const remaining = this.#numbers - done;
    return remaining > 0 ? (remaining / this.#finishedHere) * elapsed : undefined;
  }
}

export interface SubmitProgress {
  onEvent(event: ScheduleEvent): void;
  stop(): void;
}

/**
 * Progress of a scheduled submit on stderr: the tally as a spinner line on a terminal,
 * one line per change anywhere else, nothing with --quiet; a line for each task that
 * finishes, and one when the service's quota makes the run wait or a check fails and
 * will be tried again.
 */
export async function createSubmitProgress(ctx: Context, uploads: readonly Part[], intervalMs: number): Promise<SubmitProgress> {
  const progress = await createProgress(ctx.printer, ctx.env);
  const spinning = spinnerAllowed(ctx.printer, ctx.env);
  const tally = new SubmitTally(uploads, ctx.now());
  let shown = "";
  let quotaTold = false;
  const show = () => {
    const now = ctx.now();
    progress.update(tally.line(now, true));
    // Elsewhere a line per change of the counts: a new estimate alone is no news.
    const line = tally.line(now, false);
    if (spinning || line === shown) return;
    shown = line;
    progress.persist(tally.line(now, true));
  };
  const finished = new Set<number>();
  const see = (upload: Part, task: Task) => {
    tally.see(upload.index, task);
    if (!isFinished(task) || finished.has(upload.index)) return;
    finished.add(upload.index);
    progress.persist(describeTask(task));
  };
  return {
    onEvent(event) {
      if (event.type === "uploaded") {
        see(event.result.upload, event.result.task);
      } else if (event.type === "checked") {
        see(event.upload, event.task);
      } else if (event.type === "quota" && !quotaTold) {
        // Once: from then on every part waits its turn, which the counts show.
        quotaTold = true;
        progress.persist(
          `The service allows no more unfinished tasks (42900): each remaining part waits for one of this list's tasks to finish (checked every ${formatDuration(intervalMs)}).`,
        );
      } else if (event.type === "check-failed") {
        progress.persist(`checking ${event.taskId} failed (${event.error.message}); trying again at the next interval`);
      }
      show();
    },
    stop: () => progress.stop(),
  };
}
