import { DEFAULT_LIMITS, type ServiceType } from "../spec/products.js";

export type KeyReading = { ok: true; key: string | undefined } | { ok: false; msg: string };

/** Reads the Idempotency-Key header: absent is fine; empty, repeated or over 128 characters is a 40000. */
export function readIdempotencyKey(header: string | string[] | undefined): KeyReading {
  if (header === undefined) return { ok: true, key: undefined };
  const max = DEFAULT_LIMITS.idempotencyKeyMaxLength;
  if (typeof header !== "string") return { ok: false, msg: "send a single Idempotency-Key header" };
  if (header.length === 0 || header.length > max) {
    return { ok: false, msg: `Idempotency-Key must be 1 to ${max} characters (got ${header.length})` };
  }
  return { ok: true, key: header };
}

export interface IdempotentEntry {
  taskId: string;
  product: ServiceType;
  country: string;
  /** sha256 of the file the key was first sent with. */
  sha256: string;
}

/**
 * Idempotency keys and the task each created. Claiming happens in the same
 * synchronous step that creates the task and reserves its cost (see the submit
 * route), so two racing requests with one key cannot both create a task.
 * Keys are kept for the sandbox's lifetime and never logged.
 */
export class IdempotencyStore {
  private readonly byKey = new Map<string, IdempotentEntry>();

  find(key: string): IdempotentEntry | undefined {
    return this.byKey.get(key);
  }

  remember(key: string, entry: IdempotentEntry): void {
    if (this.byKey.has(key)) throw new Error("idempotency key claimed twice");
    this.byKey.set(key, entry);
  }
}

/** What differs from the original request, or undefined when the replay matches. */
export function conflictingField(
  entry: IdempotentEntry,
  request: Omit<IdempotentEntry, "taskId">,
): "service_type" | "country" | "file" | undefined {
  if (entry.product !== request.product) return "service_type";
  if (entry.country !== request.country) return "country";
  if (entry.sha256 !== request.sha256) return "file";
  return undefined;
}
