/**
 * The one pending sleep of a loop that also waits for other work: kept across the
 * loop's turns so that work finishing first does not start a second timer, replaced
 * only for an earlier moment, and cancelled when the loop ends so that no timer keeps
 * the process alive.
 */
export class WakeTimer {
  #pending: { at: number; done: Promise<void>; controller: AbortController } | undefined;

  constructor(
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly now: () => number,
  ) {}

  /** Resolves at `at` (ms on the clock), or at once when cancelled. */
  until(at: number): Promise<void> {
    if (this.#pending && this.#pending.at <= at) return this.#pending.done;
    this.cancel();
    const controller = new AbortController();
    const pending = {
      at,
      controller,
      done: this.sleep(Math.max(0, at - this.now()), controller.signal)
        .catch(() => undefined)
        .finally(() => {
          if (this.#pending === pending) this.#pending = undefined;
        }),
    };
    this.#pending = pending;
    return pending.done;
  }

  cancel(): void {
    this.#pending?.controller.abort();
    this.#pending = undefined;
  }
}
