import { formatDuration } from "../../api/attempts.js";
import { count } from "../../format-count.js";
import type { Task } from "../../spec/task.js";
import { isFinished } from "../../tasks/wait.js";

/** What a tally holds at a moment: its tasks, and the numbers in them. */
export interface TallyCounts {
  /** Tasks to follow: the parts of a submit, the ids given to wait. */
  tasks: number;
  /** Tasks with a state (a submit's parts uploaded; a wait's tasks checked at least once). */
  seen: number;
  finished: number;
  failed: number;
  /** The numbers in the tasks, as far as known: each part's count, else each task's total once checked. */
  numbers: number;
  /** False while some task's size is unknown (a wait before its first check of it). */
  numbersKnown: boolean;
  /** Numbers the tasks that succeeded checked, with a result or without one (the service counts nothing before). */
  checked: number;
  noResult: number;
}

/**
 * Where a set of tasks stands as their states arrive, for the progress of `submit --wait` and
 * `wait`: tasks finished, numbers checked (each task's success_cnt and failure_cnt once it
 * has finished: the service reports no count while it processes), and the time left at the
 * pace seen so far, once one has: the numbers of the tasks that finished while watched, over
 * the time from the start of the watch to the last of them, counted down from then (so the
 * estimate shrinks between finishes rather than growing with the clock).
 */
export class TaskTally<K> {
  readonly #sizes: Map<K, number | undefined>;
  readonly #tasks = new Map<K, Task>();
  /** Numbers of the tasks that finished while this tally watched (not those finished when first seen), and when the last did. */
  #finishedHere = 0;
  #lastFinishAt = 0;

  /** `sizes`: each task to follow, with its numbers when known before it is seen. */
  constructor(
    sizes: Iterable<readonly [K, number | undefined]>,
    private readonly startedAt: number,
  ) {
    this.#sizes = new Map(sizes);
  }

  /** Takes in a task's state, seen at `now`: it counts as finished here only if the tally saw it processing first. */
  see(key: K, task: Task, now: number): void {
    if (this.#sizes.get(key) === undefined) this.#sizes.set(key, task.total);
    const before = this.#tasks.get(key);
    if (before && !isFinished(before) && isFinished(task)) {
      this.#finishedHere += this.#sizes.get(key) ?? 0;
      this.#lastFinishAt = now;
    }
    this.#tasks.set(key, task);
  }

  counts(): TallyCounts {
    const tasks = [...this.#tasks.values()];
    const finished = tasks.filter(isFinished);
    const succeeded = finished.filter((task) => task.status === "success");
    const sizes = [...this.#sizes.values()];
    return {
      tasks: this.#sizes.size,
      seen: tasks.length,
      finished: finished.length,
      failed: finished.filter((task) => task.status === "failed").length,
      numbers: sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0),
      numbersKnown: sizes.every((size) => size !== undefined),
      // A failed task checked nothing (it is refunded in full), whatever counts it carries.
      checked: succeeded.reduce((sum, task) => sum + (task.success_cnt ?? 0) + (task.failure_cnt ?? 0), 0),
      noResult: succeeded.reduce((sum, task) => sum + (task.failure_cnt ?? 0), 0),
    };
  }

  /** The time left at this watch's own pace; undefined until a task finished while watched, or when nothing is left. */
  timeLeft(now: number): number | undefined {
    const paced = this.#lastFinishAt - this.startedAt;
    if (this.#finishedHere === 0 || paced <= 0) return undefined;
    const done = [...this.#tasks].filter(([, task]) => isFinished(task)).reduce((sum, [key]) => sum + (this.#sizes.get(key) ?? 0), 0);
    const remaining = this.counts().numbers - done;
    if (remaining <= 0) return undefined;
    return (remaining / this.#finishedHere) * paced - (now - this.#lastFinishAt);
  }

  /** "500 of 1,500 numbers checked (4 without result)"; "of 1,000+" while some task's size is unknown. */
  numbersLine(): string {
    const { numbers, numbersKnown, checked, noResult } = this.counts();
    const without = noResult > 0 ? ` (${count(noResult)} without result)` : "";
    return `${count(checked)} of ${count(numbers)}${numbersKnown ? "" : "+"} numbers checked${without}`;
  }

  /** "1 min 5 s elapsed, about 2 min left": the estimate once there is one. */
  timeLine(now: number): string {
    const left = this.timeLeft(now);
    const elapsed = `${elapsedText(now - this.startedAt)} elapsed`;
    // Past the estimate, the next finish is due any moment: say the least there is.
    return left === undefined ? elapsed : `${elapsed}, about ${formatDuration(Math.max(left, 1000))} left`;
  }
}

/** A time in whole seconds ("0 s", "45 s", "1 min 5 s"): a spinner's clock does not count milliseconds. */
export function elapsedText(ms: number): string {
  return ms < 1000 ? "0 s" : formatDuration(Math.floor(ms / 1000) * 1000);
}

/**
 * What a wait has seen so far, as one line: tasks finished (and failed), numbers checked,
 * the time elapsed and, once a task has finished during the wait, the time left at its
 * pace, then when the next check is. `timed` false leaves the times out (what changed).
 */
export function waitLine(tally: TaskTally<string>, now: number, nextCheckAt?: number, timed = true): string {
  const { tasks, finished, failed, seen } = tally.counts();
  const failedText = failed > 0 ? ` (${count(failed)} failed)` : "";
  const head = `${count(finished)} of ${count(tasks)} task${tasks === 1 ? "" : "s"} finished${failedText}${seen > 0 ? `; ${tally.numbersLine()}` : ""}`;
  if (!timed) return head;
  const next =
    nextCheckAt === undefined ? "" : `; next check in ${elapsedText(Math.max(0, Math.round((nextCheckAt - now) / 1000)) * 1000)}`;
  return `${head}; ${tally.timeLine(now)}${next}`;
}
