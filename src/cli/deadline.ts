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
  /** When --timeout ends: the whole command, what runs once it has ended included. */
  readonly #endsAt: number;
  /** When the command's own work must stop: #endsAt, less what is kept for its ending (see keepForEnding). */
  #workEndsAt: number;
  readonly #expiry = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  /** How many requests to the service are in flight (see watchRequests); none known by default. */
  #requestsInFlight: () => number = () => 0;
  /** The requests that were in flight when the time ran out, which its abort stopped. */
  #requestsStopped = 0;

  constructor(clock: Clock, seconds: number | undefined) {
    this.#clock = clock;
    this.seconds = seconds;
    this.#endsAt = seconds === undefined ? Infinity : clock.now() + seconds * 1000;
    this.#workEndsAt = this.#endsAt;
    this.signal = seconds === undefined ? clock.signal : AbortSignal.any([clock.signal, this.#expiry.signal]);
    if (seconds !== undefined) this.#arm(seconds * 1000);
  }

  /** The timer that stops the work, on the real clock, `ms` from now. */
  #arm(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      // Counted before the abort settles them: once it has, none is in flight.
      this.#requestsStopped = this.#requestsInFlight();
      this.#expiry.abort(new Error(`--timeout ${this.seconds} ran out`));
    }, ms);
    // Once the work is done the process may end: the timer alone must not keep it running.
    this.#timer.unref();
  }

  /**
   * Keeps the last `ms` of --timeout for what runs once the command has ended (--on-done,
   * --notify): its own work stops that much sooner, so that a command stopped by its
   * --timeout still tells someone, and the whole process still ends within --timeout.
   * Called before the work starts; nothing without --timeout.
   */
  keepForEnding(ms: number): void {
    if (this.seconds === undefined) return;
    this.#workEndsAt = this.#endsAt - ms;
    this.#arm(Math.max(0, this.#workEndsAt - this.#clock.now()));
  }

  /** Milliseconds left for the command's work on the run's clock; undefined without --timeout. */
  remainingMs(): number | undefined {
    return this.seconds === undefined ? undefined : Math.max(0, this.#workEndsAt - this.#clock.now());
  }

  /** Milliseconds left of the whole --timeout, what is kept for the command's ending included; undefined without --timeout. */
  remainingForEndingMs(): number | undefined {
    return this.seconds === undefined ? undefined : Math.max(0, this.#endsAt - this.#clock.now());
  }

  /**
   * Tells the deadline how many requests to the service are in flight, so that a command its
   * time ran out on says it stopped requests only when it did (not while it waited for a named
   * pipe's writer, say).
   */
  watchRequests(inFlight: () => number): void {
    this.#requestsInFlight = inFlight;
  }

  /** True once the time ran out (and not because the user interrupted first). */
  get expired(): boolean {
    return this.#expiry.signal.aborted && !this.#clock.signal.aborted;
  }

  /**
   * What a failure to reach the store means when connecting was bounded by what --timeout left
   * (see openStore): once that time is up (its timer may not have fired yet: connecting had
   * the same deadline), --timeout is what ended the command, exit 8 as for any other work it
   * stopped, not the store's unavailability (exit 7). Any other failure passes through.
   */
  explainConnecting(error: unknown): unknown {
    if (!(error instanceof BulkcheckError) || error.kind !== "unavailable" || this.#clock.signal.aborted) return error;
    if (!this.expired && this.remainingMs() !== 0) return error;
    return new TimeoutExpiredError(
      `${error.message.replace(/\.$/, "")}: the --timeout of ${formatDuration((this.seconds ?? 0) * 1000)} ran out.`,
      {
        hint: error.hint,
        cause: error,
      },
    );
  }

  dispose(): void {
    clearTimeout(this.#timer);
  }

  /**
   * What a failure means once the time has run out: the abort it caused becomes
   * exit 8 ("pending"), keeping the hint of an error that knows how to resume
   * (such as a wait's), else `resume`. Outcomes of their own (a failed task, a
   * refused key) and failures before the time ran out pass through unchanged. The
   * message says requests were stopped only when some were in flight, and leaves out
   * the interruption's own "Stopped." or "Interrupted.", which it already says.
   */
  explain(error: unknown, resume: string): unknown {
    if (!this.expired) return error;
    if (error instanceof BulkcheckError && error.kind !== "interrupted") return error;
    const told = error instanceof BulkcheckError ? error.message.replace(/^(?:Stopped|Interrupted)\.\s*/, "") : "";
    const detail = told === "" ? "" : ` ${told}`;
    const kept = this.#endsAt - this.#workEndsAt;
    const keeping = kept > 0 ? ` (its last ${formatDuration(kept)} kept to tell how the command ended)` : "";
    const stopped = this.#requestsStopped > 0 ? "; requests in flight were stopped" : "";
    return new TimeoutExpiredError(`The --timeout of ${formatDuration((this.seconds ?? 0) * 1000)} ran out${keeping}${stopped}.${detail}`, {
      hint: (error instanceof BulkcheckError ? error.hint : undefined) ?? resume,
      cause: error,
    });
  }
}
