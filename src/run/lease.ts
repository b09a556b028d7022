import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { BulkcheckError } from "../errors.js";
import { isRunning } from "../results/temp-files.js";
import type { Lease, RunRecord, Store } from "../store/store.js";

/** How often a process working on a run says so, and after how long without a word its lease may be taken. */
const HEARTBEAT_MS = 15_000;
export const STALE_AFTER_MS = 60_000;

/** This process's lease: its machine, pid, and a nonce for this invocation. */
export function ownLease(): Lease {
  return { host: hostname(), pid: process.pid, nonce: randomBytes(6).toString("hex") };
}

/**
 * Whether a lease's holder may still be working: on this machine its process must be
 * running; on another, only its heartbeat can tell (checked by the store).
 */
export function holderAlive(holder: Lease): boolean {
  return holder.host !== hostname() || isRunning(holder.pid);
}

/** Where a lease's holder runs, as people read it. */
export function describeHolder(holder: Lease): string {
  return holder.host === hostname() ? `process ${holder.pid} on this machine` : `process ${holder.pid} on ${holder.host}`;
}

/** Another bulkcheck process is working on the same run: nothing was done here (exit 10). */
export class RunBusyError extends BulkcheckError {
  constructor(
    readonly runId: string,
    readonly holder: Lease,
  ) {
    super("busy", `Run ${runId} of this list is being carried on by ${describeHolder(holder)}; nothing was done here.`, {
      hint: "Let it finish (bulkcheck runs show " + runId + "), then run the command again if you need its output here.",
    });
  }
}

/**
 * Holds a run's lease while this process works on it: taken (or refused, RunBusyError)
 * once, kept fresh by a heartbeat, and given back at the end.
 */
export class RunLease {
  #timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly store: Store,
    readonly runId: string,
    readonly lease: Lease,
    private readonly now: () => number,
  ) {}

  /** Takes the lease of an existing run, unless a live process holds it. */
  static async claim(store: Store, run: RunRecord, lease: Lease, now: () => number): Promise<RunLease> {
    const at = now();
    const holder = await store.runs.claim(
      run.id,
      lease,
      new Date(at).toISOString(),
      new Date(at - STALE_AFTER_MS).toISOString(),
      holderAlive,
    );
    if (holder) throw new RunBusyError(run.id, holder);
    return new RunLease(store, run.id, lease, now).#beat();
  }

  /** The lease of a run this process just created (the store gave it to the creator). */
  static created(store: Store, runId: string, lease: Lease, now: () => number): RunLease {
    return new RunLease(store, runId, lease, now).#beat();
  }

  #beat(): this {
    this.#timer = setInterval(() => {
      this.store.runs.heartbeat(this.runId, this.lease, new Date(this.now()).toISOString()).catch(() => undefined);
    }, HEARTBEAT_MS);
    this.#timer.unref();
    return this;
  }

  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.store.runs.release(this.runId, this.lease);
  }
}
