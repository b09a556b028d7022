import { chmodSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigStore } from "../../src/config/store.js";
import { tempDir } from "../helpers/cli.js";

describe("ConfigStore", () => {
  it("writes the config file 0600 inside a 0700 directory", () => {
    const dir = join(tempDir(), "conf");
    const store = new ConfigStore(dir);
    store.set("default", "api-key", "sk_test_abcdefghijkl");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(store.permissionWarning()).toBeUndefined();
  });

  it("keeps profiles apart and unsets settings", () => {
    const store = new ConfigStore(tempDir());
    store.set("default", "base-url", "https://a.example");
    store.set("prod", "base-url", "https://b.example");
    expect(store.profile("default")["base-url"]).toBe("https://a.example");
    expect(store.profile("prod")["base-url"]).toBe("https://b.example");
    expect(store.unset("prod", "base-url")).toBe(true);
    expect(store.unset("prod", "base-url")).toBe(false);
    expect(store.profile("prod")).toEqual({});
  });

  it("creates the install secret once and keeps it", () => {
    const dir = tempDir();
    const secret = new ConfigStore(dir).installSecret();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(new ConfigStore(dir).installSecret()).toBe(secret);
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).install_secret).toBe(secret);
  });

  it("warns when the config file is readable by others", () => {
    const store = new ConfigStore(tempDir());
    store.set("default", "base-url", "https://a.example");
    chmodSync(store.path, 0o644);
    expect(store.permissionWarning()).toMatch(/readable by other users.*chmod 600/);
  });
});
