export type LedgerKind = "reserve" | "charge" | "refund";

export interface LedgerEntry {
  /** ISO 8601 UTC, from the sandbox clock. */
  at: string;
  task_id: string;
  kind: LedgerKind;
  micros: number;
}

/**
 * The account in integer micro-USD. Every method is synchronous, so a
 * check-and-reserve can never interleave with another request's. `balance` is
 * what the balance endpoint reports: the opening balance minus open
 * reservations minus charges. It can never go negative.
 */
export class Ledger {
  private available: number;
  private reservedTotal = 0;
  private readonly entries: LedgerEntry[] = [];
  private readonly settled = new Set<string>();

  constructor(readonly startMicros: number) {
    this.available = startMicros;
  }

  get balance(): number {
    return this.available;
  }

  get reserved(): number {
    return this.reservedTotal;
  }

  /** Reserves `micros` for a task; returns false, recording nothing, when the balance is short. */
  reserve(taskId: string, micros: number, atMs: number): boolean {
    if (micros > this.available) return false;
    this.available -= micros;
    this.reservedTotal += micros;
    this.record(atMs, taskId, "reserve", micros);
    return true;
  }

  /** Ends a task's reservation: keeps `chargeMicros`, refunds the rest. Exactly once per task. */
  settle(taskId: string, reservedMicros: number, chargeMicros: number, atMs: number): void {
    if (this.settled.has(taskId)) throw new Error(`task ${taskId} settled twice`);
    if (chargeMicros < 0 || chargeMicros > reservedMicros) throw new Error(`charge ${chargeMicros} outside reservation ${reservedMicros}`);
    this.settled.add(taskId);
    this.reservedTotal -= reservedMicros;
    this.available += reservedMicros - chargeMicros;
    if (chargeMicros > 0) this.record(atMs, taskId, "charge", chargeMicros);
    if (reservedMicros > chargeMicros) this.record(atMs, taskId, "refund", reservedMicros - chargeMicros);
  }

  list(): readonly LedgerEntry[] {
    return this.entries;
  }

  private record(atMs: number, taskId: string, kind: LedgerKind, micros: number): void {
    this.entries.push({ at: new Date(atMs).toISOString(), task_id: taskId, kind, micros });
  }
}
