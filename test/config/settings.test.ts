import { describe, expect, it } from "vitest";
import { settingSpec } from "../../src/config/settings.js";
import { redactKey } from "../../src/config/redact.js";
import { isLoopback, resolveApiKey, resolveBaseUrl, resolveLimits, resolvePrices } from "../../src/config/resolve.js";
import { UsageError, AuthError } from "../../src/errors.js";

describe("settings", () => {
  it.each([
    ["base-url", "https://api.example.com/", "https://api.example.com"],
    ["base-url", "http://127.0.0.1:8787", "http://127.0.0.1:8787"],
    ["min-task-size", "1000", 1000],
    ["max-task-size", "100_000", 100000],
    ["price.carrier_batch", "0.0015", 1500],
    ["api-key", "  sk_live_abc123  ", "sk_live_abc123"],
  ])("parses %s %j", (key, text, stored) => {
    expect(settingSpec(key).parse(text)).toBe(stored);
  });

  it.each([
    ["base-url", "not a url"],
    ["base-url", "ftp://example.com"],
    ["min-task-size", "-5"],
    ["max-file-bytes", "1.5"],
    ["price.carrier_batch", "cheap"],
    ["api-key", "   "],
    ["api-key", "two words"],
  ])("rejects %s %j with a usage error", (key, text) => {
    expect(() => settingSpec(key).parse(text)).toThrow(UsageError);
  });

  it("rejects an unknown setting and lists the known ones", () => {
    expect(() => settingSpec("colour")).toThrow(/Unknown setting "colour"/);
  });
});

describe("redactKey", () => {
  it.each([
    ["sk_live_1234567890abcdef", "sk_l…cdef"],
    ["short", "*****"],
    ["", "****"],
  ])("shows %j as %j", (key, shown) => {
    expect(redactKey(key)).toBe(shown);
  });
});

describe("resolution", () => {
  const base = { profileName: "default", profile: { "api-key": "profile-key-123456", "base-url": "https://profile.example" } };

  it("prefers the flag, then the environment, then the profile for the base URL", () => {
    expect(resolveBaseUrl({ ...base, env: { BULKCHECK_BASE_URL: "https://env.example" }, baseUrlFlag: "https://flag.example" })).toEqual({
      value: "https://flag.example",
      source: "flag",
    });
    expect(resolveBaseUrl({ ...base, env: { BULKCHECK_BASE_URL: "https://env.example" } })).toEqual({
      value: "https://env.example",
      source: "environment",
    });
    expect(resolveBaseUrl({ ...base, env: {} })).toEqual({ value: "https://profile.example", source: "profile" });
  });

  it("prefers the environment over the profile for the API key", () => {
    expect(resolveApiKey({ ...base, env: { BULKCHECK_API_KEY: "env-key" } })).toEqual({ value: "env-key", source: "environment" });
    expect(resolveApiKey({ ...base, env: {} })).toEqual({ value: "profile-key-123456", source: "profile" });
  });

  it.each(["", " ", "\t"])("refuses a set but blank BULKCHECK_API_KEY (%j) even when the profile has a key", (blank) => {
    expect(() => resolveApiKey({ ...base, env: { BULKCHECK_API_KEY: blank } })).toThrow("BULKCHECK_API_KEY is set but blank.");
  });

  it("explains how to set a missing key (auth) and a missing base URL (usage)", () => {
    const empty = { profileName: "prod", profile: {}, env: {} };
    expect(() => resolveApiKey(empty)).toThrow(AuthError);
    expect(() => resolveBaseUrl(empty)).toThrow(UsageError);
    try {
      resolveApiKey(empty);
    } catch (error) {
      expect((error as AuthError).hint).toContain("bulkcheck config set api-key");
    }
  });

  it("uses the spec's defaults for limits and prices unless the profile overrides them", () => {
    expect(resolveLimits({})).toEqual({ minTaskSize: 500, maxTaskSize: 500000, maxFileBytes: 20971520, maxInFlight: 5 });
    expect(resolveLimits({ "min-task-size": 1000, "max-task-size": 100000 })).toMatchObject({ minTaskSize: 1000, maxTaskSize: 100000 });
    expect(resolvePrices({ "price.carrier_batch": 1500 })).toMatchObject({ carrier_batch: 1500, number_activity_batch: 3000 });
  });

  it("knows a loopback base URL (the sandbox's) from a remote one, by host only", () => {
    for (const url of ["http://127.0.0.1:8787", "http://127.3.2.1", "http://localhost:8787/v1", "http://[::1]:8787"]) {
      expect(isLoopback(url), url).toBe(true);
    }
    for (const url of ["https://api.example.com", "http://127.0.0.1.example.com", "http://10.0.0.1", "http://sub.localhost.example"]) {
      expect(isLoopback(url), url).toBe(false);
    }
  });
});
