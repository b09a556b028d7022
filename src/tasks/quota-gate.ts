/**
 * When uploads may start, given the service's quota of unfinished tasks (42900).
 * Until the first 42900 they start freely; after it, the service has no room for
 * another task until one finishes, so each of this run's tasks seen finishing lets
 * one upload go. Another 42900 closes the gate again.
 */
export class QuotaGate {
  #blocked = false;
  #credits = 0;

  /** A 42900 was answered and no task has made room since. */
  get closed(): boolean {
    return this.#blocked && this.#credits === 0;
  }

  /** Takes room for one upload; false when there is none. */
  tryStart(): boolean {
    if (!this.#blocked) return true;
    if (this.#credits === 0) return false;
    this.#credits--;
    return true;
  }

  /** The service answered 42900: no room until a task finishes. */
  refused(): void {
    this.#blocked = true;
    this.#credits = 0;
  }

  /** Room may have come from tasks that are not this run's (another run of the same command): one upload may try. */
  retry(): void {
    if (this.#blocked) this.#credits = Math.max(this.#credits, 1);
  }

  /** One of this run's tasks finished, freeing room for one upload. */
  taskFinished(): void {
    if (this.#blocked) this.#credits++;
  }
}
