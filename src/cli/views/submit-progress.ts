import { formatDuration } from "../../api/attempts.js";
import { count } from "../../format-count.js";
import type { Task } from "../../spec/task.js";
import type { ScheduleEvent } from "../../tasks/schedule.js";
import type { PlannedUpload } from "../../tasks/submit.js";
import { isFinished } from "../../tasks/wait.js";
import type { Context } from "../context.js";
import { createProgress } from "../progress.js";
import { describeTask } from "./task-view.js";
import { TaskTally } from "./task-tally.js";

/** What progress needs of a part: its place in the run and how many numbers it holds. */
export type Part = Pick<PlannedUpload, "index" | "count">;

/**
 * What a scheduled submit has done so far, as one line: parts uploaded, processing and
 * finished, numbers checked, the time elapsed and, once a task has finished during this
 * run, the time left at its pace. `timed` false leaves the times out (what changed, for
 * the lines printed without a terminal).
 */
export function submitLine(tally: TaskTally<number>, now: number, timed = true): string {
  const { tasks: parts, seen, finished } = tally.counts();
  const head = `${count(seen)} of ${count(parts)} part${parts === 1 ? "" : "s"} uploaded (${count(seen - finished)} processing, ${count(finished)} finished); ${tally.numbersLine()}`;
  return timed ? `${head}; ${tally.timeLine(now)}` : head;
}

export interface SubmitProgress {
  onEvent(event: ScheduleEvent): void;
  stop(): void;
}

/**
 * Progress of a scheduled submit on stderr: the tally as a spinner line on a terminal,
 * its clock moving every second, one line per change anywhere else, nothing with --quiet;
 * a line for each task that finishes, and one when the service's quota makes the run
 * wait or a check fails and will be tried again.
 */
export async function createSubmitProgress(ctx: Context, uploads: readonly Part[], intervalMs: number): Promise<SubmitProgress> {
  const progress = await createProgress(ctx.printer, ctx.env, ctx.now);
  const tally = new TaskTally<number>(
    uploads.map((upload) => [upload.index, upload.count]),
    ctx.now(),
  );
  let shown = "";
  let quotaTold = false;
  const show = () => {
    const now = ctx.now();
    progress.update(submitLine(tally, now));
    // Elsewhere a line per change of the counts: the clock and a new estimate alone are no news.
    const line = submitLine(tally, now, false);
    if (progress.live || line === shown) return;
    shown = line;
    progress.persist(submitLine(tally, now));
  };
  // The elapsed time moves every second between events, on a terminal only.
  const ticker = progress.live ? setInterval(show, 1000) : undefined;
  ticker?.unref();
  const finished = new Set<number>();
  const see = (upload: Part, task: Task) => {
    tally.see(upload.index, task, ctx.now());
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
    stop() {
      clearInterval(ticker);
      progress.stop();
    },
  };
}
