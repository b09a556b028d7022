import type { ChangesSummary } from "../ledger/changes.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { billing } from "../tasks/billing.js";
import { isFinished } from "../tasks/wait.js";

/**
 * What a command tells about how it ended, beyond its exit code. Its action fills it in as
 * it learns each part (a task id as soon as it is known, so a command that fails later still
 * names it); main reads it once the command has ended, for --exit-on-change's exit status
 * and for the summary that --on-done and --notify receive.
 */
export class CommandOutcome {
  /** The run of a submit or retry-failed. */
  run: string | undefined;
  /** The -o file (absolute), or "-" for stdout. */
  output: string | undefined;
  /** What changed since the previous check of the list, when it was compared. */
  changes: ChangesSummary | undefined;
  /** What the service charged for the command's tasks, once all of them have finished. */
  chargedMicros: number | undefined;
  /** --exit-on-change found something that changed: the command ends with exit 11 when it succeeds. */
  changed = false;
  /** Something reads this outcome when the command ends (--on-done, --notify): the changes are worth counting even unasked. */
  awaited = false;
  readonly #tasks = new Set<string>();

  /** The command's tasks, in the order they became known. */
  get tasks(): string[] {
    return [...this.#tasks];
  }

  addTasks(ids: Iterable<string>): void {
    for (const id of ids) this.#tasks.add(id);
  }

  /** Takes the charge of these tasks, when every one has finished (a task still processing has not been charged yet). */
  charge(tasks: readonly Task[], prices: Record<ServiceType, number>): void {
    this.chargedMicros = tasks.every(isFinished) ? billing(tasks, prices).chargedMicros : undefined;
  }
}
