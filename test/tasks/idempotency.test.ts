import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { deriveIdempotencyKey, userKeyForChunk } from "../../src/tasks/idempotency.js";
import { formatUsd, reservationMicros } from "../../src/tasks/cost.js";
import { UsageError } from "../../src/errors.js";

const parts = { product: "carrier_batch", country: "GB", contentSha256: "a".repeat(64) };

describe("deriveIdempotencyKey", () => {
  it("is stable for the same secret, product, country and content", () => {
    const key = deriveIdempotencyKey("secret", parts);
    expect(key).toMatch(/^bc1-[0-9a-f]{64}$/);
    expect(deriveIdempotencyKey("secret", parts)).toBe(key);
  });

  it.each([
    ["another secret", { ...parts }, "other"],
    ["another product", { ...parts, product: "number_activity_batch" }, "secret"],
    ["another country", { ...parts, country: "DE" }, "secret"],
    ["other content", { ...parts, contentSha256: "b".repeat(64) }, "secret"],
    ["a retry's parent task (a retry is never its parent)", { ...parts, retryOf: "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53" }, "secret"],
  ])("changes with %s", (_label, changed, secret) => {
    expect(deriveIdempotencyKey(secret, changed)).not.toBe(deriveIdempotencyKey("secret", parts));
  });

  it("is what it always was for an upload that is not a retry (journalled keys keep working)", () => {
    expect(deriveIdempotencyKey("secret", parts)).toBe(
      "bc1-" +
        createHmac("sha256", "secret")
          .update("bc1\ncarrier_batch\nGB\n" + "a".repeat(64) + "\n")
          .digest("hex"),
    );
  });

  it("changes with a nonce (--resubmit)", () => {
    expect(deriveIdempotencyKey("secret", parts, "n1")).not.toBe(deriveIdempotencyKey("secret", parts));
  });

  it("numbers a user key per chunk and enforces the 128-character limit", () => {
    expect(userKeyForChunk("nightly", 0, 1)).toBe("nightly");
    expect(userKeyForChunk("nightly", 1, 3)).toBe("nightly-2");
    expect(() => userKeyForChunk("k".repeat(129), 0, 1)).toThrow(UsageError);
    expect(() => userKeyForChunk("k".repeat(127), 0, 2)).toThrow(UsageError);
  });
});

describe("cost", () => {
  it.each([
    [0, "$0.00"],
    [1000, "$0.001"],
    [1_234_000, "$1.234"],
    [10_000_000, "$10.00"],
    [3_500_000, "$3.50"],
    [-2000, "-$0.002"],
    [1_196_399_000, "$1,196.399"],
    [4_473_887_000, "$4,473.887"],
    [1_234_567_890_123, "$1,234,567.890123"],
    [1, "$0.000001"],
    [999_999_999, "$999.999999"],
  ])("formats %i micros as %s (exact in micros, at least cents, thousands separated)", (micros, text) => {
    expect(formatUsd(micros)).toBe(text);
  });

  it("reserves every uploaded number at the product price", () => {
    expect(reservationMicros(1200, 3000)).toBe(3_600_000);
  });
});
