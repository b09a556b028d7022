import { closestMatch, didYouMean } from "../did-you-mean.js";
import { DEFAULT_LIMITS, DEFAULT_PRICE_MICROS, MICROS_PER_USD, SERVICE_TYPES, type ServiceType } from "../spec/products.js";
import { UsageError } from "../errors.js";
import { formatAge, parseDuration } from "./duration.js";
import { redactKey, withoutCredentials, withoutPassword } from "./redact.js";
import { commandWords } from "./command-words.js";
import { newWebhookSecret, webhookSecret } from "./webhook-secret.js";

/** What one profile stores. Keys are the names users type in `bulkcheck config set`. */
export type ProfileSettings = Partial<Record<SettingKey, string | number>>;

export type SettingKey =
  | "api-key"
  | "base-url"
  | "min-task-size"
  | "max-task-size"
  | "max-file-bytes"
  | "max-in-flight"
  | `price.${ServiceType}`
  | "max-age"
  | "ledger"
  | "ledger-retention"
  | "pad"
  | "store"
  | "on-done"
  | "notify"
  | "notify-format"
  | "webhook-secret";

interface SettingSpec {
  describe: string;
  /** What the secret is called ("API key"): read only from a hidden prompt or stdin, and never shown whole. */
  secret?: string;
  /** A new random value, for `config set KEY --generate` (a secret is then printed once). */
  generate?: () => string;
  /** Turns what the user typed into the stored value, or throws a UsageError saying what is expected. */
  parse(text: string): string | number;
  /** Throws a UsageError when a parsed value may be used but not kept in the profile (a store URL with a password). */
  checkStored?(value: string | number): void;
  /** The environment variable whose value wins over the profile's (see resolve.ts). */
  variable?: string;
  /**
   * What may be shown of a value that is or may hold a secret (a key, a password or token in a
   * URL, a chat webhook's secret path): every view shows this instead (see shownSetting). A
   * setting without it holds nothing secret: its parser takes numbers or words only.
   */
  conceal?(value: string): string;
  /** How a value is written for a person (an age as 12h, a price in USD); JSON keeps the stored value. */
  format?(value: string | number): string;
  /** The value in force when neither the environment nor the profile sets one (none for the key and the URL). */
  defaultValue?: string | number;
}

/**
 * How old a result may be and still be reused instead of checked again, by default: long
 * enough that a list run again the same working day (a re-run, another format, a second
 * list with the same numbers) pays nothing twice; short enough that a job run every day,
 * whenever in the night it starts, always checks again. A schedule that wants reuse says
 * so (`--max-age 7d`).
 */
export const DEFAULT_MAX_AGE_SECONDS = 12 * 3600;

/** An age as the user typed it (`12h`, `7d`, `0`), stored in seconds and shown back the same way. */
const ageSetting = (name: string, describe: string, defaultValue?: number): SettingSpec => ({
  describe,
  ...(defaultValue === undefined ? {} : { defaultValue }),
  parse(text) {
    try {
      return parseDuration(text, { age: true });
    } catch (error) {
      throw new UsageError(`${name}: ${(error as Error).message}`);
    }
  },
  format: (seconds) => formatAge(Number(seconds)),
});

const positiveInteger = (name: string) => (text: string) => {
  const value = Number(text.replace(/_/g, ""));
  if (!Number.isSafeInteger(value) || value <= 0) throw new UsageError(`${name} must be a positive whole number, got "${text}".`);
  return value;
};

const priceSetting = (product: ServiceType): SettingSpec => ({
  describe: `price per number of ${product} in USD (default ${DEFAULT_PRICE_MICROS[product] / MICROS_PER_USD})`,
  defaultValue: DEFAULT_PRICE_MICROS[product],
  parse(text) {
    const usd = Number(text);
    if (!Number.isFinite(usd) || usd < 0) throw new UsageError(`price.${product} must be a price in USD such as 0.001, got "${text}".`);
    return Math.round(usd * MICROS_PER_USD);
  },
  format: (micros) => String(Number(micros) / MICROS_PER_USD),
});

/** Where a database password goes instead of a store URL (as libpq reads it). */
const PASSWORD_HINT = "Give the password in PGPASSWORD or in ~/.pgpass (mode 0600), and the URL without it.";

export const SETTINGS: Readonly<Record<SettingKey, SettingSpec>> = {
  "api-key": {
    describe: "API key (set it from stdin or a hidden prompt: `bulkcheck config set api-key`)",
    secret: "API key",
    variable: "BULKCHECK_API_KEY",
    conceal: redactKey,
    parse(text) {
      const key = text.trim();
      if (!key) throw new UsageError("The API key is empty.");
      if (/\s/.test(key)) throw new UsageError("The API key contains white space; paste it again.");
      return key;
    },
  },
  "base-url": {
    describe: "service base URL, e.g. https://api.example.com (paths /api/v1/... are added)",
    variable: "BULKCHECK_BASE_URL",
    conceal: withoutCredentials,
    parse(text) {
      let url: URL;
      try {
        url = new URL(text.trim());
      } catch {
        throw new UsageError(`"${text}" is not a URL; give one like https://api.example.com.`);
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError("The base URL must start with https:// or http://.");
      return url.toString().replace(/\/+$/, "");
    },
  },
  "min-task-size": {
    describe: `smallest task the service accepts (default ${DEFAULT_LIMITS.minTaskSize})`,
    defaultValue: DEFAULT_LIMITS.minTaskSize,
    parse: positiveInteger("min-task-size"),
  },
  "max-task-size": {
    describe: `largest task; bigger lists are split (default ${DEFAULT_LIMITS.maxTaskSize})`,
    defaultValue: DEFAULT_LIMITS.maxTaskSize,
    parse: positiveInteger("max-task-size"),
  },
  "max-file-bytes": {
    describe: `largest upload file in bytes (default ${DEFAULT_LIMITS.maxFileBytes})`,
    defaultValue: DEFAULT_LIMITS.maxFileBytes,
    parse: positiveInteger("max-file-bytes"),
  },
  "max-in-flight": {
    describe: `uploads at once (default ${DEFAULT_LIMITS.maxInFlight}, the service's slot limit)`,
    defaultValue: DEFAULT_LIMITS.maxInFlight,
    parse: positiveInteger("max-in-flight"),
  },
  ...(Object.fromEntries(SERVICE_TYPES.map((p) => [`price.${p}`, priceSetting(p)])) as Record<`price.${ServiceType}`, SettingSpec>),
  "max-age": ageSetting(
    "max-age",
    `reuse a ledger result younger than this instead of checking the number again (default 12h; 0 never reuses)`,
    DEFAULT_MAX_AGE_SECONDS,
  ),
  ledger: {
    describe: "keep every downloaded result in the ledger (on, the default) or keep no result at all (off)",
    defaultValue: "on",
    parse(text) {
      const value = text.trim().toLowerCase();
      if (value !== "on" && value !== "off") throw new UsageError(`ledger is on or off, got "${text}".`);
      return value;
    },
  },
  pad: {
    describe:
      "numbers that need a result but are too few for a task: oldest (the default) fills the task with the oldest fresh results, never lets them wait for a later run",
    defaultValue: "oldest",
    parse(text) {
      const value = text.trim().toLowerCase();
      if (value !== "oldest" && value !== "never") throw new UsageError(`pad is oldest or never, got "${text}".`);
      return value;
    },
  },
  "ledger-retention": ageSetting(
    "ledger-retention",
    "remove ledger results older than this after each run (e.g. 180d; default: keep them)",
  ),
  store: {
    describe: "where runs, tasks and the ledger live: postgres://user@host/db for a team's PostgreSQL (default: the local SQLite file)",
    parse(text) {
      const location = text.trim();
      if (!/^postgres(ql)?:\/\/./i.test(location)) {
        throw new UsageError(`store is a postgres://user@host/database URL, got "${withoutPassword(location)}".`, {
          hint: "Unset it to keep the local SQLite file: bulkcheck config unset store",
        });
      }
      if (/[?&]password=/i.test(location)) {
        throw new UsageError(`The store URL ${withoutPassword(location)} has a password= parameter, which bulkcheck does not take.`, {
          hint: PASSWORD_HINT,
        });
      }
      return location;
    },
    checkStored(value) {
      const location = String(value);
      const password = URL.canParse(location) ? new URL(location).password : /^[^:/?#]*:\/\/[^:@/?#]*:.*@/s.test(location);
      if (password) {
        throw new UsageError(
          `The store URL ${withoutPassword(location)} holds a password: bulkcheck keeps no database password in its settings (and shell history keeps command lines).`,
          { hint: `${PASSWORD_HINT} Then: bulkcheck config set store postgres://user@host/database` },
        );
      }
    },
    variable: "BULKCHECK_STORE_URL",
    conceal: withoutPassword,
  },
  "on-done": {
    describe: "command that submit --wait, wait, download and retry-failed --wait run when they end (as --on-done; run without a shell)",
    parse(text) {
      commandWords(text);
      return text.trim();
    },
    // A command may carry a chat webhook's URL, whose path is its secret.
    conceal: (command) => command.replace(URL_IN_TEXT, urlOrigin),
  },
  notify: {
    describe: "URL that submit --wait, wait, download and retry-failed --wait post their summary to when they end (as --notify)",
    parse: (text) => notifyUrl(text).href,
    conceal: urlOrigin,
  },
  "notify-format": {
    describe: "what --notify posts: standard (signed JSON, Standard Webhooks) or slack (a text message for Slack or Teams, unsigned)",
    defaultValue: "standard",
    parse(text) {
      const value = text.trim().toLowerCase();
      if (value !== "standard" && value !== "slack") throw new UsageError(`notify-format is standard or slack, got "${text}".`);
      return value;
    },
  },
  "webhook-secret": {
    describe: "secret that signs --notify's posts, whsec_… (from a hidden prompt or stdin; --generate makes one)",
    secret: "webhook secret",
    variable: "BULKCHECK_WEBHOOK_SECRET",
    conceal: redactKey,
    generate: newWebhookSecret,
    parse: webhookSecret,
  },
};

/**
 * The one rule for what any view may show of a setting's value: `config get`, `config list`
 * and `config set`'s note, for a person, in --json and through --query (`form` "json" keeps a
 * number a number), and messages that name a value. A value that may hold a secret is
 * concealed (SettingSpec.conceal) in every one of them; any other is shown as stored, written
 * for a person (SettingSpec.format) unless `form` is "json".
 */
export function shownSetting(key: SettingKey, value: string | number, form: "person" | "json" = "person"): string | number {
  const spec = SETTINGS[key];
  if (spec.conceal) return spec.conceal(String(value));
  if (form === "json") return value;
  return spec.format ? spec.format(value) : String(value);
}

/** A URL written in a command's text: up to white space or a quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"]+/gi;

/**
 * A URL as it may be shown: its origin alone (no user or password), the rest elided. A chat's
 * incoming-webhook URL is a secret in its path, so --notify's URL is never shown whole.
 */
export function urlOrigin(href: string): string {
  if (!URL.canParse(href)) return "(a URL that does not parse)";
  const url = new URL(href);
  return url.pathname === "/" && url.search === "" ? url.origin : `${url.origin}/…`;
}

/** A --notify URL: http or https only. */
export function notifyUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError("The notification URL is not a URL; give one like https://hooks.example.com/bulkcheck.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UsageError(`The notification URL must start with https:// or http://, not ${url.protocol}//.`);
  }
  return url;
}

export function isSettingKey(name: string): name is SettingKey {
  return Object.hasOwn(SETTINGS, name);
}

export function settingSpec(name: string): SettingSpec & { key: SettingKey } {
  if (!isSettingKey(name)) {
    const settings = Object.keys(SETTINGS);
    throw new UsageError(`Unknown setting "${name}".${didYouMean(closestMatch(name, settings))}`, {
      hint: `Settings: ${settings.join(", ")}`,
    });
  }
  return { ...SETTINGS[name], key: name };
}
