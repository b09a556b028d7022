import { randomBytes } from "node:crypto";
import { UsageError } from "../errors.js";

/** How the Standard Webhooks specification writes a signing secret: this prefix, then the key in base64. */
const PREFIX = "whsec_";

/** The key lengths the specification allows (bytes). */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/** A new secret: 32 random bytes, written as the specification writes secrets. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString("base64");
}

/**
 * A secret as typed (`whsec_…`, or the base64 alone, as the reference implementation also
 * takes it) in the one form bulkcheck stores: `whsec_` and the base64. What is wrong is
 * said without ever quoting the secret.
 */
export function webhookSecret(text: string): string {
  const trimmed = text.trim();
  const encoded = trimmed.startsWith(PREFIX) ? trimmed.slice(PREFIX.length) : trimmed;
  if (encoded === "") throw new UsageError("The webhook secret is empty.");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new UsageError("The webhook secret is not whsec_ followed by base64.", {
      hint: "Paste it again, or make a new one: bulkcheck config set webhook-secret --generate",
    });
  }
  const bytes = Buffer.from(encoded, "base64").length;
  if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES) {
    throw new UsageError(
      `The webhook secret's key is ${bytes} bytes; Standard Webhooks secrets are ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes.`,
      { hint: "Make one that fits: bulkcheck config set webhook-secret --generate" },
    );
  }
  return PREFIX + encoded;
}

/** The HMAC key a secret stands for: its base64 part, decoded. */
export function webhookKey(secret: string): Buffer {
  return Buffer.from(webhookSecret(secret).slice(PREFIX.length), "base64");
}
