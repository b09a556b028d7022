import { chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type Conf from "conf";
import { UsageError } from "../errors.js";
import type { ProfileSettings, SettingKey } from "./settings.js";

/** The config file's name in the config directory. */
export const CONFIG_FILE = "config.json";

interface StoredConfig {
  /** A random secret bulkcheck 0.1 derived its idempotency keys with: kept, no longer read (keys now come from each run). */
  install_secret?: string;
  profiles: Record<string, ProfileSettings>;
}

/**
 * The config file (`config.json` in the config directory): profiles of settings.
 * The only file the API key is ever written to; it is
 * created 0600 inside a 0700 directory.
 *
 * conf writes it (atomically, with its schema of defaults). Reading is a plain
 * JSON parse, because loading conf and the ajv it brings costs ~80 ms and most
 * commands only read: conf is loaded on the first write.
 */
export class ConfigStore {
  #conf: Conf<StoredConfig> | undefined;
  #read: StoredConfig | undefined;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  get path(): string {
    return join(this.dir, CONFIG_FILE);
  }

  profile(name: string): ProfileSettings {
    return this.#stored().profiles[name] ?? {};
  }

  profileNames(): string[] {
    return Object.keys(this.#stored().profiles);
  }

  async set(profile: string, key: SettingKey, value: string | number): Promise<void> {
    await this.#updateProfile(profile, (settings) => ({ ...settings, [key]: value }));
  }

  /** Sets several settings of a profile at once, in one write. */
  async setAll(profile: string, settings: ProfileSettings): Promise<void> {
    await this.#updateProfile(profile, (current) => ({ ...current, ...settings }));
  }

  /** Returns whether the setting was present. */
  async unset(profile: string, key: SettingKey): Promise<boolean> {
    const had = Object.hasOwn(this.profile(profile), key);
    await this.#updateProfile(profile, (settings) => {
      const { [key]: _removed, ...rest } = settings;
      return rest;
    });
    return had;
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

  async #updateProfile(profile: string, change: (settings: ProfileSettings) => ProfileSettings): Promise<void> {
    const writer = await this.#writer();
    const profiles = { ...writer.get("profiles") };
    profiles[profile] = change(profiles[profile] ?? {});
    writer.set("profiles", profiles);
    this.#tighten();
  }

  #stored(): StoredConfig {
    if (this.#conf) return this.#conf.store;
    this.#read ??= readStored(this.path);
    return this.#read;
  }

  async #writer(): Promise<Conf<StoredConfig>> {
    if (!this.#conf) {
      this.#stored(); // a broken file gets our message, not conf's parse error
      const { default: Conf } = await import("conf");
      this.#conf = new Conf<StoredConfig>({
        cwd: this.dir,
        configName: CONFIG_FILE.replace(/\.json$/, ""),
        configFileMode: 0o600,
        accessPropertiesByDotNotation: false,
        defaults: { profiles: {} },
      });
    }
    return this.#conf;
  }

  /** conf applies the file mode only when it creates the file; keep it 0600 whatever happened before. */
  #tighten(): void {
    chmodSync(this.path, 0o600);
  }
}

function readStored(path: string): StoredConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw new UsageError(`Cannot read the config file ${path}: ${(error as Error).message}.`, {
      hint: "Check its permissions.",
      cause: error,
    });
  }
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The config file ${path} is not valid JSON: ${describeSyntaxError(text, error as SyntaxError)}.`, {
      hint: "Fix it there, or move it away and set the API key and base URL again (bulkcheck config set ...).",
      cause: error,
    });
  }
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) throw notAnObject(path);
  const { profiles } = stored as Partial<StoredConfig>;
  return { ...stored, profiles: profiles ?? {} };
}

function notAnObject(path: string): UsageError {
  return new UsageError(`The config file ${path} is not a JSON object.`, {
    hint: "Fix it, or move it away and set the API key and base URL again (bulkcheck config set ...).",
  });
}

/**
 * "line 3, column 1: expected double-quoted property name". V8 gives only a
 * character position (Node 20), or the position and the line (Node 22+);
 * the line and column are counted here from the position, the same on both.
 */
function describeSyntaxError(text: string, error: SyntaxError): string {
  const what = error.message.replace(/ in JSON at position \d+.*$/, "").replace(/^Unexpected end of JSON input$/, "the text ends too soon");
  const position = /at position (\d+)/.exec(error.message)?.[1];
  const offset = position === undefined ? (/end of JSON input/.test(error.message) ? text.length : undefined) : Number(position);
  if (offset === undefined) return what;
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}: ${what.charAt(0).toLowerCase()}${what.slice(1)}`;
}
