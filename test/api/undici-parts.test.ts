import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as undici from "undici";
import { describe, expect, it } from "vitest";
import { EnvHttpProxyAgent, undiciFormData } from "../../src/api/undici.js";

describe("undici, loaded in parts", () => {
  it("gives the very classes the package exports", () => {
    expect(EnvHttpProxyAgent).toBe(undici.EnvHttpProxyAgent);
    expect(undiciFormData()).toBe(undici.FormData);
  });

  it("equips dispatchers with the request API in a process that never loads undici's index", () => {
    const parts = fileURLToPath(new URL("../../dist/api/undici.js", import.meta.url));
    const script = `
      const { EnvHttpProxyAgent } = await import(${JSON.stringify(parts)});
      const { createRequire } = await import("node:module");
      const cache = createRequire(import.meta.url).cache;
      const agent = new EnvHttpProxyAgent();
      console.log(JSON.stringify({
        methods: ["request", "stream", "pipeline", "connect", "upgrade"].map((name) => typeof agent[name]),
        indexLoaded: Object.keys(cache).some((path) => /undici[\\\\/]index\\.js$/.test(path)),
      }));
      await agent.close();`;
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
    expect(out).toEqual({ methods: ["function", "function", "function", "function", "function"], indexLoaded: false });
  });
});
