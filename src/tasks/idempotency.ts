import { createHmac, randomBytes } from "node:crypto";
import { DEFAULT_LIMITS } from "../spec/products.js";
import { UsageError } from "../errors.js";

export interface KeyParts {
  product: string;
  country: string | undefined;
  /** sha256 of the exact bytes uploaded. */
  contentSha256: string;
  /** For retry-failed: the task whose numbers are retried. A retry is another task than its parent, even with the same bytes. */
  retryOf?: string;
}

/**
 * The idempotency key bulkcheck derives for an upload: stable for this install
 * (the same list, product and country always give the same key, so a re-run
 * after a crash returns the original task), but unguessable by anyone without
 * the install secret. A nonce (from --resubmit) makes a fresh key on purpose.
 */
export function deriveIdempotencyKey(secret: string, parts: KeyParts, nonce?: string): string {
  const mac = createHmac("sha256", secret);
  // A retry's parent joins the end, so the keys of every other upload stay what they always were.
  const retry = parts.retryOf === undefined ? [] : [`retry-of:${parts.retryOf}`];
  mac.update(["bc1", parts.product, parts.country ?? "", parts.contentSha256, nonce ?? "", ...retry].join("\n"));
  return `bc1-${mac.digest("hex")}`;
}

export function freshNonce(): string {
  return randomBytes(8).toString("hex");
}

/** A user-given key covers one task; with several chunks each gets a numbered suffix. */
export function userKeyForChunk(key: string, index: number, chunks: number): string {
  const chunkKey = chunks === 1 ? key : `${key}-${index + 1}`;
  assertKeyLength(chunkKey);
  return chunkKey;
}

export function assertKeyLength(key: string): void {
  if (key.length === 0 || key.length > DEFAULT_LIMITS.idempotencyKeyMaxLength) {
    throw new UsageError(
      `The idempotency key must be 1 to ${DEFAULT_LIMITS.idempotencyKeyMaxLength} characters (it is ${key.length}${key.length > 0 ? ", including the chunk suffix" : ""}).`,
    );
  }
}
