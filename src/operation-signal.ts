/** Operations under way per shared signal: one listener on the shared signal aborts them all. */
const operationsOf = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * A signal of its own for one operation (a request, a wait, a result's transfer), aborted
 * with `shared` and its reason, and `release` for when the operation ends. Every request
 * and wait of a run listens to the run's one signal (Ctrl-C, SIGTERM, --timeout): each
 * adding its listener to it made Node warn once more than ten were under way
 * (MaxListenersExceededWarning on stderr, which a cron job mails). `shared` gets one
 * listener however many operations run, and forgets each when it is released.
 * (AbortSignal.any links without a listener, but Node 20 keeps a reference to every
 * signal ever linked for as long as `shared` lives: one per request of a day-long wait.)
 */
export function operationSignal(shared: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  if (shared.aborted) {
    controller.abort(shared.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  let operations = operationsOf.get(shared);
  if (!operations) {
    const live = new Set<AbortController>();
    shared.addEventListener(
      "abort",
      () => {
        for (const operation of live) operation.abort(shared.reason);
        live.clear();
      },
      { once: true },
    );
    operationsOf.set(shared, live);
    operations = live;
  }
  operations.add(controller);
  const registered = operations;
  return { signal: controller.signal, release: () => void registered.delete(controller) };
}
