import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Conf from "conf";
import type { ProfileSettings, SettingKey } from "./settings.js";

interface StoredConfig {
  /** Random per-install secret that keys the derived idempotency keys. */
  install_secret?: string;
  profiles: Record<string, ProfileSettings>;
}


/**
 * The config file (`config.json` in the config directory): profiles of settings
 * plus the install secret. The only file the API key is ever written to; it is
 * created 0600 inside a 0700 directory.
 */
export class ConfigStore {
  readonly #conf: Conf<StoredConfig>;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#conf = new Conf<StoredConfig>({
      cwd: dir,
      configName: "config",
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      defaults: { profiles: {} },
    });
  }

  get path(): string {
    return this.#conf.path;
  }

  profile(name: string): ProfileSettings {
    return this.#conf.get("profiles")[name] ?? {};
  }

  profileNames(): string[] {
    return Object.keys(this.#conf.get("profiles"));
  }

  set(profile: string, key: SettingKey, value: string | number): void {
    this.#updateProfile(profile, (settings) => ({ ...settings, [key]: value }));
  }

  /** Returns whether the setting was present. */
  unset(profile: string, key: SettingKey): boolean {
    const had = Object.hasOwn(this.profile(profile), key);
    this.#updateProfile(profile, (settings) => {
      const { [key]: _removed, ...rest } = settings;
      return rest;
    });
    return had;
  }

  /**
   * The per-install secret, created on first use. Processes that start together on
   * a fresh install must agree on one, or a list one of them submitted would get a
   * different idempotency key on its next run (and a second task): the first to
   * create `install-secret` wins, the others adopt its value.
   */
  installSecret(): string {
    let secret = this.#conf.get("install_secret");
    if (!secret) {
      secret = createOnce(join(this.dir, "install-secret"), randomBytes(32).toString("hex"));
      this.#conf.set("install_secret", secret);
      this.#tighten();
    }
    return secret;
  }

  /** A warning when the config file (which may hold an API key) is readable by other users. */
  permissionWarning(): string | undefined {
    let mode: number;
    try {
      mode = statSync(this.path).mode;
    } catch {
      return undefined;
    }
    if ((mode & 0o077) === 0) return undefined;
    return `${this.path} is readable by other users (mode ${(mode & 0o777).toString(8)}); run: chmod 600 '${this.path}'`;
  }

  #updateProfile(profile: string, change: (settings: ProfileSettings) => ProfileSettings): void {
    const profiles = { ...this.#conf.get("profiles") };
    profiles[profile] = change(profiles[profile] ?? {});
    this.#conf.set("profiles", profiles);
    this.#tighten();
  }

  /** conf applies the file mode only when it creates the file; keep it 0600 whatever happened before. */
  #tighten(): void {
    chmodSync(this.path, 0o600);
  }
}

/**
 * Writes `candidate` to `path` unless the file exists, and returns the file's
 * content. The bytes go to a temp file first and are hard-linked into place, so
 * no reader ever sees a half-written file; without hard links, an exclusive
 * create (`wx`) decides instead.
 */
function createOnce(path: string, candidate: string): string {
  const temp = `${path}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temp, candidate, { mode: 0o600 });
  try {
    linkSync(temp, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST") {
      try {
        writeFileSync(path, candidate, { mode: 0o600, flag: "wx" });
      } catch (fallback) {
        if ((fallback as NodeJS.ErrnoException).code !== "EEXIST") throw fallback;
      }
    }
  } finally {
    rmSync(temp, { force: true });
  }
  return readFileSync(path, "utf8").trim();
}
