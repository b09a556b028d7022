import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { SandboxCore } from "./core.js";
import type { LedgerEntry } from "./ledger.js";
import type { StatsSnapshot } from "./stats.js";
import { taskView } from "./task-view.js";

/** A task as the admin state shows it: the fuller variant plus whether it was submitted with an Idempotency-Key. */
export type StateTask = Task & { idempotency_key_present: boolean };

/** Body `data` of `GET /_sandbox/state`, and what `Sandbox.inspect()` returns. */
export interface SandboxState {
  balance_micros: number;
  reserved_micros: number;
  start_balance_micros: number;
  prices: Record<ServiceType, number>;
  tasks: StateTask[];
  ledger: LedgerEntry[];
  stats: StatsSnapshot;
  /** Scripted faults not yet consumed. */
  scripted_faults_pending: number;
}

/**
 * A snapshot at `nowMs`. Callers settle finished tasks first (`refreshAll` or
 * `refreshAllNow`); the task phases here are read without waiting.
 */
export function buildState(core: SandboxCore, nowMs: number): SandboxState {
  const view = core.viewAt(nowMs);
  return {
    balance_micros: core.ledger.balance,
    reserved_micros: core.ledger.reserved,
    start_balance_micros: core.ledger.startMicros,
    prices: { ...core.prices },
    tasks: core.tasks.all().map((task) => ({
      ...taskView(task, core.tasks.observeNow(task, nowMs), view),
      idempotency_key_present: task.idempotencyKey !== undefined,
    })),
    ledger: [...core.ledger.list()],
    stats: core.stats.snapshot(core.slots.inFlight()),
    scripted_faults_pending: core.faults.pending(),
  };
}
