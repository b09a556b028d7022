import { describe, expect, it } from "vitest";
import type { Context } from "../../src/cli/context.js";
import { pollInterval } from "../../src/cli/actions/shared/waiting.js";
import { UsageError } from "../../src/errors.js";

/** Only the base URL decides the interval. */
const at = (baseUrl: string) => ({ baseUrl: () => Promise.resolve(baseUrl) }) as unknown as Context;

describe("the interval between checks (docs/runs.md, --interval's help)", () => {
  it("is the service's 30 s floor by default, and refuses less than it, against a remote service", async () => {
    expect(await pollInterval(at("https://api.example.com"), undefined)).toBe(30_000);
    expect(await pollInterval(at("https://api.example.com"), 90)).toBe(90_000);
    await expect(pollInterval(at("https://api.example.com"), 5)).rejects.toBeInstanceOf(UsageError);
  });

  it("is 0.2 s by default against a local sandbox, where any --interval goes", async () => {
    expect(await pollInterval(at("http://127.0.0.1:8080"), undefined)).toBe(200);
    expect(await pollInterval(at("http://127.0.0.1:8080"), 1)).toBe(1000);
  });
});
