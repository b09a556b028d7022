/**
 * When to check each task against the service's polling floor (one check of a task per
 * 30 s, no progress exposed), so that a finished task is seen soon after it finishes: the
 * next part of a big list waits for exactly that. Checking every 30 s from the upload sees a
 * task on average 15 s after it finished. Pure: the scheduler and the simulation in
 * check-simulation.ts drive it with their own clocks; docs/performance.md gives the model and
 * its figures.
 *
 * The model: a task's processing time is proportional to its size (the service works through
 * its numbers at a per-number pace the client learns). Each check tells whether the task's
 * pace is above (unfinished) or below (finished) the time since its upload divided by its
 * size; the newest of these bounds that agree make the pace's window. A task's checks fall
 * one floor apart, aligned so that one lands on its target:
 * - while the window is wide, a point inside it that no other unfinished task aims at (the
 *   middle of the widest gap between their targets): the task is seen sooner if it is there
 *   already, and otherwise the window halves for every task after it;
 * - once it is narrow, its latest finish, plus a margin for a task a little slower than the
 *   others: the task is seen within the window's width of finishing.
 * With no window yet (the first tasks), a task is checked one floor after its upload, then the
 * checks of tasks under way at once are staggered across the floor, so that together they
 * bound the pace more finely than one task can. A task still unfinished after its target is
 * checked at every floor. A check of one task tells nothing of another's state; what the plan
 * shares between tasks is the pace.
 */

/** Bounds kept (the newest): enough for many tasks' checks. */
const REMEMBERED = 200;
/** Aim this much later than the window's latest finish, as a share of the foreseen time: a task's own pace varies a little. */
const MARGIN = 0.01;
/** Probe inside the window while the gap probed spans at least this share of the floor for the task; narrower, aim at its end. */
const PROBE = 1 / 6;
/**
 * A check falls a little after the moment it was planned for (timers, the answer's own time);
 * an aligned moment less than this share of the floor behind the earliest allowed one is
 * taken as that earliest moment, so that slipping does not cost a whole floor.
 */
const SLIP = 0.05;

interface Followed {
  /** The numbers in the task; undefined for a task found from an earlier run (when it began is not known). */
  readonly size: number | undefined;
  /** When its upload was answered. */
  readonly startedAt: number;
  /** When it was last asked about (its upload counts as the first time): the floor runs from here. */
  lastAskedAt: number;
  /** Where its checks fall within the floor (ms after a multiple of the floor), while no pace is known. */
  readonly phase: number;
  /** The pace (ms per number) its checks aim at, chosen when it was followed with a window known. */
  aim: number | undefined;
}

/** One check's lesson: the pace (ms per number) is above `value` (the task was unfinished) or at most `value`. */
interface Bound {
  above: boolean;
  value: number;
}

export class CheckPlan {
  readonly #followed = new Map<string, Followed>();
  readonly #bounds: Bound[] = [];

  /** `floorMs`: the least time between two requests about one task (the service's 30 s). */
  constructor(private readonly floorMs: number) {}

  /**
   * A task to follow, answered at `at`; `size` is its count of numbers, or undefined when it
   * began before this run (it is then checked from now on, and teaches nothing of the pace).
   */
  follow(id: string, size: number | undefined, at: number): void {
    const known = size !== undefined && size > 0;
    const aim = known ? this.#chooseAim(size) : undefined;
    this.#followed.set(id, { size: known ? size : undefined, startedAt: at, lastAskedAt: at, phase: this.#freePhase(at), aim });
  }

  /**
   * A check of `id` sent at `sentAt` and answered at `answeredAt`: finished or not, or
   * undefined when it failed. A finished task is forgotten.
   */
  checked(id: string, sentAt: number, answeredAt: number, finished: boolean | undefined): void {
    const task = this.#followed.get(id);
    if (!task) return;
    task.lastAskedAt = answeredAt;
    if (finished === undefined) return;
    if (finished) this.#followed.delete(id);
    if (task.size === undefined) return;
    // Unfinished when the check was sent at the latest; finished by its answer at the latest.
    this.#bounds.push({ above: !finished, value: ((finished ? answeredAt : sentAt) - task.startedAt) / task.size });
    if (this.#bounds.length > REMEMBERED) this.#bounds.shift();
  }

  /** When `id` should be checked next: never sooner than the floor after it was last asked about. */
  nextCheck(id: string): number {
    const task = this.#followed.get(id);
    if (!task) throw new Error(`task ${id} is not followed`);
    const earliest = task.lastAskedAt + this.floorMs;
    const window = this.#window();
    if (task.size === undefined || !window) {
      // The first check one floor after the upload sees a short task soonest; staggering begins with the second.
      return task.lastAskedAt === task.startedAt ? earliest : this.#aligned(earliest, task.phase);
    }
    // A task followed before any window was known aims once there is one.
    task.aim ??= this.#chooseAim(task.size);
    const aimed = task.aim === undefined ? undefined : task.startedAt + task.size * task.aim;
    const stillInside = task.aim !== undefined && task.aim > window.low && task.aim <= window.latest;
    if (aimed !== undefined && aimed > earliest - this.floorMs * SLIP && stillInside) return this.#aligned(earliest, aimed);
    // Its aim has passed or left the window: the latest finish the window allows, then every floor.
    const latest = task.startedAt + task.size * window.latest;
    return latest <= earliest ? earliest : this.#aligned(earliest, latest);
  }

  /**
   * The pace a new task of `size` numbers aims at: the middle of the widest gap between the
   * window's ends and the aims of the unfinished tasks, while that gap spans PROBE of the
   * floor for this task; otherwise the window's latest finish with its margin.
   */
  #chooseAim(size: number): number | undefined {
    const window = this.#window();
    if (!window) return undefined;
    const points = [window.low, window.high];
    for (const task of this.#followed.values())
      if (task.aim !== undefined && task.aim > window.low && task.aim < window.high) points.push(task.aim);
    points.sort((a, b) => a - b);
    let gap = { low: window.low, high: window.low };
    for (let i = 1; i < points.length; i++)
      if (points[i]! - points[i - 1]! > gap.high - gap.low) gap = { low: points[i - 1]!, high: points[i]! };
    if ((gap.high - gap.low) * size >= this.floorMs * PROBE) return (gap.low + gap.high) / 2;
    return window.latest;
  }

  /**
   * The pace's window: the newest bounds, taken back as long as they agree (one that
   * contradicts the newer ones tells of a pace that has changed, and it and older ones are
   * left out). Undefined until some task has been seen finished.
   */
  #window(): { low: number; high: number; latest: number } | undefined {
    let low = 0;
    let high = Infinity;
    for (let i = this.#bounds.length - 1; i >= 0; i--) {
      const { above, value } = this.#bounds[i]!;
      if (above ? value >= high : value <= low) break;
      if (above) low = Math.max(low, value);
      else high = Math.min(high, value);
    }
    return Number.isFinite(high) ? { low, high, latest: high * (1 + MARGIN) } : undefined;
  }

  /** The first moment from `earliest` on that is a whole number of floors before (or after) `target`. */
  #aligned(earliest: number, target: number): number {
    const ahead = this.#mod(target - earliest);
    return ahead > this.floorMs * (1 - SLIP) ? earliest : earliest + ahead;
  }

  /** The phase for a task followed from `at`: in the middle of the widest gap between the phases of the others' next checks. */
  #freePhase(at: number): number {
    const taken = [...this.#followed.keys()].map((id) => this.#mod(this.nextCheck(id))).sort((a, b) => a - b);
    if (taken.length === 0) return this.#mod(at);
    let best = { start: taken.at(-1)!, width: taken[0]! + this.floorMs - taken.at(-1)! };
    for (let i = 1; i < taken.length; i++) {
      const width = taken[i]! - taken[i - 1]!;
      if (width > best.width) best = { start: taken[i - 1]!, width };
    }
    return this.#mod(best.start + best.width / 2);
  }

  /** `ms` into [0, floor). */
  #mod(ms: number): number {
    return ((ms % this.floorMs) + this.floorMs) % this.floorMs;
  }
}
