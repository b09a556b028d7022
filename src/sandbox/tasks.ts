import type { ServiceType } from "../spec/products.js";
import type { Ledger } from "./ledger.js";
import { phaseAt, preparationEndMs, successCount, type Phase } from "./lifecycle.js";
import { prepareLines, type Prepared } from "./preparation.js";
import { hashUnit } from "./random.js";

export interface TaskRecord {
  readonly id: string;
  /** 1-based submission order; with the seed it decides whether the task fails. */
  readonly ordinal: number;
  readonly product: ServiceType;
  readonly country: string;
  readonly submittedLines: number;
  readonly createdAtMs: number;
  readonly priceMicros: number;
  readonly reservedMicros: number;
  readonly idempotencyKey: string | undefined;
  readonly fails: boolean;
  /** The file's lines as uploaded, joined by newlines: what the task was given (GET /_sandbox/tasks/{id}/lines). */
  readonly uploaded: string;
  readonly preparation: Promise<Prepared>;
  prepared: Prepared | undefined;
  settled: boolean;
  /** Last submit or check of the task, for counting fast polls. */
  lastContact: { atMs: number; processing: boolean };
}

export interface NewTask {
  id: string;
  product: ServiceType;
  country: string;
  lines: readonly string[];
  priceMicros: number;
  reservedMicros: number;
  idempotencyKey: string | undefined;
  createdAtMs: number;
}

export interface TaskSettings {
  seed: number;
  failRate: number;
  noResultRate: number;
  numbersPerSecond: number;
}

/**
 * Every task, and the rule that each is settled exactly once: the first time
 * any request (check, balance, submit, result, state) observes it finished, its
 * reservation becomes a charge for success_cnt × price and a refund of the rest
 * (a failed task is refunded in full).
 */
export class TaskStore {
  private readonly byId = new Map<string, TaskRecord>();
  private readonly open = new Set<TaskRecord>();

  constructor(
    private readonly ledger: Ledger,
    private readonly settings: TaskSettings,
    private readonly signal: AbortSignal,
  ) {}

  /** Registers a task (its cost already reserved) and starts classifying its lines in the background. */
  create(input: NewTask): TaskRecord {
    const ordinal = this.byId.size + 1;
    const { seed, failRate, noResultRate } = this.settings;
    const preparation = prepareLines(
      { lines: input.lines, country: input.country, product: input.product, seed, noResultRate },
      this.signal,
    );
    const task: TaskRecord = {
      id: input.id,
      ordinal,
      product: input.product,
      country: input.country,
      submittedLines: input.lines.length,
      createdAtMs: input.createdAtMs,
      priceMicros: input.priceMicros,
      reservedMicros: input.reservedMicros,
      idempotencyKey: input.idempotencyKey,
      fails: failRate > 0 && hashUnit(seed, "fail", String(ordinal)) < failRate,
      uploaded: input.lines.join("\n"),
      preparation,
      prepared: undefined,
      settled: false,
      lastContact: { atMs: input.createdAtMs, processing: true },
    };
    preparation.then(
      (prepared) => (task.prepared = prepared),
      () => undefined, // only fails when the sandbox closes; requests awaiting it see the rejection
    );
    this.byId.set(task.id, task);
    this.open.add(task);
    return task;
  }

  get(id: string): TaskRecord | undefined {
    return this.byId.get(id);
  }

  all(): TaskRecord[] {
    return [...this.byId.values()];
  }

  /** Tasks not yet seen finished (call `refreshAll` first for an exact count). */
  unfinishedCount(): number {
    return this.open.size;
  }

  /** The task's phase at `nowMs`, waiting for its classification if the clock says it is due; settles a finished task. */
  async observe(task: TaskRecord, nowMs: number): Promise<Phase> {
    if (!task.prepared && nowMs >= preparationEndMs(task)) await task.preparation;
    return this.observeNow(task, nowMs);
  }

  /** Like `observe` without waiting: a task whose classification is still running shows as preparing. */
  observeNow(task: TaskRecord, nowMs: number): Phase {
    const phase = phaseAt(task, task.prepared, nowMs, this.settings.numbersPerSecond);
    if ("finishedAtMs" in phase && !task.settled) {
      task.settled = true;
      this.open.delete(task);
      this.ledger.settle(task.id, task.reservedMicros, successCount(phase) * task.priceMicros, nowMs);
    }
    return phase;
  }

  /** Observes every unfinished task, so balances and quotas reflect everything finished by `nowMs`. */
  async refreshAll(nowMs: number): Promise<void> {
    for (const task of [...this.open]) await this.observe(task, nowMs);
  }

  refreshAllNow(nowMs: number): void {
    for (const task of [...this.open]) this.observeNow(task, nowMs);
  }
}
