import { createHmac, randomBytes } from "node:crypto";

/*
 * What `ledger forget` erased while runs were open that could bring it back (issue 35). A run
 * killed after its task's result was fetched, and carried on after a forget, fetched the result
 * again: the number was back in the ledger and in the output. So an erasure is remembered (the
 * tables `erasures` and `erased_numbers`, migration 3) for as long as a run that was open at it
 * may still record or write results: each forget is one erasure, with the last task reference
 * given its numbers before it (every task of a run open then is at or below it: a run writes all
 * its parts before its first upload), the product it was limited to, and its numbers as
 * HMAC-SHA-256 hashes under a key of its own, never their digits. A task at or below that
 * reference never has those numbers' rows recorded (result-recording.ts)
 * nor written to an output (ResultSource.withheld). Once no run that was open at the erasure is
 * still open, the erasure goes (dropSpentErasures).
 *
 * A hash is no strong secret: phone numbers are few enough to be tried one by one against it,
 * key and all. It is kept only as long as needed, and holds no digits for a search of the
 * files to find.
 */

/** A new erasure's key for its numbers' hashes. */
export function newHashKey(): string {
  return randomBytes(16).toString("hex");
}

/** What an erasure keeps of a number: the HMAC-SHA-256 of its digits (with the country code) under the erasure's key, in hex. */
export function erasedHash(key: string, identifier: number): string {
  return createHmac("sha256", key).update(String(identifier)).digest("hex");
}

/** Numbers erased since a task was given its numbers, as their hashes under each erasure's key. */
export class ErasedNumbers {
  readonly #byKey = new Map<string, Set<string>>();

  /** From rows of (key, hash), as ERASED_FOR_TASK selects them; undefined when there are none (nothing to leave out). */
  static of(rows: ReadonlyArray<readonly unknown[]>): ErasedNumbers | undefined {
    if (rows.length === 0) return undefined;
    const erased = new ErasedNumbers();
    for (const [key, hash] of rows) {
      const hashes = erased.#byKey.get(String(key)) ?? new Set<string>();
      hashes.add(String(hash));
      erased.#byKey.set(String(key), hashes);
    }
    return erased;
  }

  /** Whether `identifier` (a number's digits as an integer) is one of them. */
  has(identifier: number): boolean {
    for (const [key, hashes] of this.#byKey) if (hashes.has(erasedHash(key, identifier))) return true;
    return false;
  }
}

/**
 * A run that may still record results or write an output with a task `t` of it (its run `r`):
 * an open run (carried on later), or an abandoned one whose created task is neither recorded
 * nor failed (its result is collected into the ledger when it finishes: see abandoned.ts).
 */
const LIVE_RUN_TASK = `r.state = 'open' OR (r.state = 'abandoned' AND t.task_id IS NOT NULL AND t.recorded_at IS NULL
  AND (t.status IS NULL OR t.status <> 'failed'))`;

/** The last task reference so far, and whether a run that may still record results has a task up to it. */
export const ERASURE_BOUND = `SELECT (SELECT max(ref) FROM tasks),
  EXISTS (SELECT 1 FROM tasks t JOIN runs r ON r.id = t.run_id WHERE ${LIVE_RUN_TASK})`;

/** The (key, hash) of every number erased since task `?` was given its numbers (of its product, or of every product); the task's reference twice. */
export const ERASED_FOR_TASK = `SELECT e.hash_key, n.hash FROM erasures e JOIN erased_numbers n ON n.erasure_id = e.id
  WHERE e.last_task_ref >= ? AND (e.product IS NULL OR e.product = (SELECT product FROM tasks WHERE ref = ?))`;

/** Erasures no run open at them can use any more: every run with a task up to their bound has ended. */
export const SPENT_ERASURES = `SELECT e.id FROM erasures e WHERE NOT EXISTS (
  SELECT 1 FROM tasks t JOIN runs r ON r.id = t.run_id WHERE t.ref <= e.last_task_ref AND (${LIVE_RUN_TASK}))`;

/**
 * On PostgreSQL, what makes an erasure and a recording of results take turns (an arbitrary
 * constant, "bulkeras" in ASCII): a forget takes it alone for each of its transactions, a
 * recording shares it for its one. A recording then either committed before the forget's
 * delete (which deletes its rows) or reads the erasure before it inserts (and leaves them out).
 * SQLite's transactions take the write lock at once, so they take turns already.
 */
export const ERASURE_LOCK = "7094695996511379827";
