import { describe, expect, it } from "vitest";
import { sandboxOptionsFromFlags } from "../../src/cli/actions/shared/sandbox-options.js";
import { UsageError } from "../../src/errors.js";
import { resolveOptions, SANDBOX_DEFAULTS } from "../../src/sandbox/options.js";

describe("bulkcheck sandbox flags", () => {
  it("leaves the sandbox's own default for every flag not given", () => {
    const { apiKey, log, now, verifyWebhook, ...resolved } = resolveOptions(sandboxOptionsFromFlags({ host: "127.0.0.1", port: 0 }));
    expect(resolved).toEqual(SANDBOX_DEFAULTS);
    expect(apiKey).toMatch(/^sk_sandbox_/);
    expect([typeof log, typeof now, typeof verifyWebhook]).toEqual(["function", "function", "function"]);
  });

  it("passes only the flags that were given, under the option names startSandbox takes", () => {
    expect(sandboxOptionsFromFlags({ host: "127.0.0.1", port: 0 })).toEqual({ host: "127.0.0.1", port: 0 });
    expect(
      sandboxOptionsFromFlags({
        host: "127.0.0.1",
        port: 8787,
        apiKey: "k",
        urlTtl: 5,
        resultDelay: 2,
        resultMissRate: 0.1,
        chaos: 0.3,
        chaosFaults: "42901, 50303,drop",
        retryAfter: 3,
        seed: 7,
        prices: "carrier_batch=1500",
        separateResultOrigin: true,
      }),
    ).toEqual({
      host: "127.0.0.1",
      port: 8787,
      apiKey: "k",
      urlTtlSeconds: 5,
      resultDelaySeconds: 2,
      noResultRate: 0.1,
      chaos: 0.3,
      chaosFaults: ["42901", "50303", "drop"],
      retryAfterSeconds: 3,
      seed: 7,
      prices: { carrier_batch: 1500 },
      separateResultOrigin: true,
    });
  });

  it.each([
    [{ chaosFaults: "42901,teapot" }, /unknown fault teapot/],
    [{ prices: "carrier_batch=cheap" }, /--prices/],
  ])("rejects %j with a usage error", (flags, message) => {
    expect(() => sandboxOptionsFromFlags({ host: "127.0.0.1", port: 0, ...flags })).toThrow(UsageError);
    expect(() => sandboxOptionsFromFlags({ host: "127.0.0.1", port: 0, ...flags })).toThrow(message);
  });
});
