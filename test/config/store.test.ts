import { chmodSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigStore } from "../../src/config/store.js";
import { tempDir } from "../helpers/cli.js";

describe("ConfigStore", async () => {
  it("writes the config file 0600 inside a 0700 directory", async () => {
    const dir = join(tempDir(), "conf");
    const store = new ConfigStore(dir);
    await store.set("default", "api-key", "sk_test_abcdefghijkl");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(store.permissionWarning()).toBeUndefined();
  });

  it("keeps profiles apart and unsets settings", async () => {
    const store = new ConfigStore(tempDir());
    await store.set("default", "base-url", "https://a.example");
    await store.set("prod", "base-url", "https://b.example");
    expect(store.profile("default")["base-url"]).toBe("https://a.example");
    expect(store.profile("prod")["base-url"]).toBe("https://b.example");
    expect(await store.unset("prod", "base-url")).toBe(true);
    expect(await store.unset("prod", "base-url")).toBe(false);
    expect(store.profile("prod")).toEqual({});
  });

  it("warns when the config file is readable by others", async () => {
    const store = new ConfigStore(tempDir());
    await store.set("default", "base-url", "https://a.example");
    chmodSync(store.path, 0o644);
    expect(store.permissionWarning()).toMatch(/readable by other users.*chmod 600/);
  });

  it("reads settings another process wrote without loading conf, and sees its own writes", async () => {
    const dir = tempDir();
    await new ConfigStore(dir).set("default", "base-url", "https://a.example");
    const reader = new ConfigStore(dir);
    expect(reader.profile("default")).toEqual({ "base-url": "https://a.example" });
    await reader.set("default", "api-key", "sk_test_abcdefghijkl");
    expect(reader.profile("default")).toEqual({ "base-url": "https://a.example", "api-key": "sk_test_abcdefghijkl" });
    expect(new ConfigStore(tempDir()).profileNames()).toEqual([]);
  });

  it.each([
    ["{ not json", /config\.json is not valid JSON: line 1, column 3: /],
    [
      '{\n  "profiles": {\n    "default": { "base-url": "https://a.example", }\n  }\n}',
      /config\.json is not valid JSON: line 3, column 51: /,
    ],
    ['{\n  "profiles": {', /config\.json is not valid JSON: line 2, column 16: /],
    ["null", /config\.json is not a JSON object/],
    ["[1]", /config\.json is not a JSON object/],
  ])("says which file to fix, and where, when the config file is %j, on reads and writes", async (text, message) => {
    const dir = tempDir();
    writeFileSync(join(dir, "config.json"), text);
    expect(() => new ConfigStore(dir).profile("default")).toThrow(message);
    await expect(new ConfigStore(dir).set("default", "base-url", "https://a.example")).rejects.toThrow(message);
  });
});
