import { BulkcheckError, TimeoutExpiredError } from "../errors.js";
import { formatDuration } from "../api/attempts.js";

interface Clock {
  /** Ctrl-C or SIGTERM: never turned into a timeout. */
  signal: AbortSignal;
  /** The run's clock (a test's fake one moves only when the run sleeps). */
  now: () => number;
}

/**
 * The bound `--timeout SEC` puts on a whole command: one signal, aborted when the
 * time runs out or on Ctrl-C, that every request, wait and download of the run
 * listens to. The timer runs on the real clock, so a request that hangs is cut
 * off; waits also compare against the run's own clock (`remainingMs`), so they
 * end in order, with the tasks' states known, whenever they can.
 */
export class CommandDeadline {
  readonly signal: AbortSignal;
  readonly seconds: number | undefined;
  readonly #clock: Clock;
  readonly #endsAt: number;
  readonly #expiry = new AbortController();
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(clock: Clock, seconds: number | undefined) {
    this.#clock = clock;
    this.seconds = seconds;
    this.#endsAt = seconds === undefined ? Infinity : clock.now() + seconds * 1000;
    this.signal = seconds === undefined ? clock.signal : AbortSignal.any([clock.signal, this.#expiry.signal]);
    if (seconds !== undefined) {
      this.#timer = setTimeout(() => this.#expiry.abort(new Error(`--timeout ${seconds} ran out`)), seconds * 1000);
      // Once the work is done the process may end: the timer alone must not keep it running.
      this.#timer.unref();
    }
  }

  /** Milliseconds left on the run's clock; undefined without --timeout. */
  remainingMs(): number | undefined {
    return this.seconds === undefined ? undefined : Math.max(0, this.#endsAt - this.#clock.now());
  }

  /** True once the time ran out (and not because the user interrupted first). */
  get expired(): boolean {
    return this.#expiry.signal.aborted && !this.#clock.signal.aborted;
  }

  dispose(): void {
    clearTimeout(this.#timer);
  }

  /**
   * What a failure means once the time has run out: the abort it caused becomes
   * exit 8 ("pending"), keeping the hint of an error that knows how to resume
   * (such as a wait's), else `resume`. Outcomes of their own (a failed task, a
   * refused key) and failures before the time ran out pass through unchanged.
   */
  explain(error: unknown, resume: string): unknown {
    if (!this.expired) return error;
    if (error instanceof BulkcheckError && error.kind !== "interrupted") return error;
    const detail = error instanceof BulkcheckError && error.message !== "Interrupted." ? ` ${error.message}` : "";
    return new TimeoutExpiredError(
      `The --timeout of ${formatDuration((this.seconds ?? 0) * 1000)} ran out; requests in flight were stopped.${detail}`,
      {
        hint: (error instanceof BulkcheckError ? error.hint : undefined) ?? resume,
        cause: error,
      },
    );
  }
}
