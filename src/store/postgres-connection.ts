import { readFileSync, statSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import type { ConnectionOptions } from "node:tls";
import type { PoolConfig } from "pg";
import { withoutPassword } from "../config/redact.js";
import { UsageError } from "../errors.js";
import { StoreUnavailableError } from "./store.js";

/** The environment a connection reads: PGPASSWORD, PGPASSFILE and HOME (for ~/.pgpass and ~/.postgresql/). */
export type ConnectionEnv = Readonly<Record<string, string | undefined>>;

/** libpq's SSL modes. `allow` is taken as `prefer`: TLS when the server offers it. */
export type SslMode = "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full";
const SSL_MODES: readonly string[] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/** The URL's query parameters understood here, as libpq names them; any other is refused rather than ignored. */
const PARAMETERS = ["sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "application_name"];

const DEFAULT_CONNECT_TIMEOUT_S = 10;

/**
 * What bounds connecting to the store beyond the URL's connect_timeout: the time the
 * command has left (--timeout), and the signal of Ctrl-C and SIGTERM.
 */
export interface ConnectBounds {
  withinMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface PostgresTarget {
  /** The URL without its password, for messages, `store status` and logs. */
  location: string;
  sslMode: SslMode;
  /** Everything pg needs, given explicitly so that pg consults neither process.env nor ~/.pgpass itself. */
  config: PoolConfig & { connectionTimeoutMillis: number };
}

/**
 * Reads a store URL (`postgres://user[:password]@host[:port]/database?sslmode=…`) the way
 * libpq reads it, with its defaults: port 5432, the OS user, a database named after the
 * user, `sslmode=prefer`. The password comes from the URL, else PGPASSWORD, else the
 * password file (PGPASSFILE or ~/.pgpass, ignored unless 0600 as libpq does), looked up only
 * when the server asks for one; pg is given it as a function, since its own ~/.pgpass
 * support prints a deprecation warning.
 */
export function postgresTarget(storeUrl: string, env: ConnectionEnv): PostgresTarget {
  let url: URL;
  try {
    url = new URL(storeUrl);
  } catch {
    throw new UsageError("The store URL is not a URL.", { hint: "Write it as postgres://user@host:5432/database?sslmode=require." });
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new UsageError(`The store URL must start with postgres:// (not ${url.protocol}//).`);
  }
  for (const name of url.searchParams.keys()) {
    if (!PARAMETERS.includes(name)) {
      throw new UsageError(`The store URL has a parameter bulkcheck does not know: ${name}.`, {
        hint: `Known parameters: ${PARAMETERS.join(", ")}.`,
      });
    }
  }
  const param = (name: string) => url.searchParams.get(name) ?? undefined;
  const user = decodeURIComponent(url.username) || userInfo().username;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost";
  const port = url.port === "" ? 5432 : Number(url.port);
  const database = decodeURIComponent(url.pathname.slice(1)) || user;
  const sslMode = (param("sslmode") ?? "prefer") as SslMode;
  if (!SSL_MODES.includes(sslMode)) {
    throw new UsageError(`The store URL's sslmode=${sslMode} is not one of ${SSL_MODES.join(", ")}.`);
  }
  const given = url.password === "" ? undefined : decodeURIComponent(url.password);
  const location = withoutPassword(url.href);
  const timeout = Number(param("connect_timeout") ?? DEFAULT_CONNECT_TIMEOUT_S);
  return {
    location,
    sslMode,
    config: {
      host,
      port,
      user,
      database,
      password: () => given ?? env.PGPASSWORD ?? passwordFromFile(env, { host, port, database, user }) ?? missingPassword(location),
      ssl: tlsOptions(sslMode, { rootCert: param("sslrootcert"), cert: param("sslcert"), key: param("sslkey") }, env),
      application_name: param("application_name") ?? "bulkcheck",
      connectionTimeoutMillis: (Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_CONNECT_TIMEOUT_S) * 1000,
      // A server that vanished without closing the connection (a network cut) is noticed.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    },
  };
}

function missingPassword(location: string): never {
  throw new UsageError(`The database at ${location} asks for a password and none is set.`, {
    hint: "Put it in the URL, in PGPASSWORD, or in ~/.pgpass (mode 0600).",
  });
}

/**
 * What pg's `ssl` option must be for libpq's `sslmode`. `prefer` starts with TLS without
 * checking the certificate, and PostgresStore falls back to plain TCP when the server has no
 * TLS; `require` checks the certificate against sslrootcert when one is given (as libpq
 * does), `verify-ca` checks the chain, `verify-full` the chain and the host name. Without
 * sslrootcert the chain is checked against ~/.postgresql/root.crt if it exists, else against
 * Node's root certificates (`sslrootcert=system`).
 */
function tlsOptions(
  mode: SslMode,
  files: { rootCert?: string; cert?: string; key?: string },
  env: ConnectionEnv,
): false | ConnectionOptions {
  if (mode === "disable") return false;
  const home = env.HOME ?? homedir();
  const read = (path: string) => readFileSync(path.replace(/^~(?=\/|$)/, home));
  const clientCert = files.cert && files.key ? { cert: read(files.cert), key: read(files.key) } : {};
  if (mode === "allow" || mode === "prefer" || (mode === "require" && files.rootCert === undefined)) {
    return { rejectUnauthorized: false, ...clientCert };
  }
  const defaultRoot = join(home, ".postgresql", "root.crt");
  const rootCert = files.rootCert ?? (statSync(defaultRoot, { throwIfNoEntry: false })?.isFile() ? defaultRoot : "system");
  const ca = rootCert === "system" ? {} : { ca: read(rootCert) };
  return mode === "verify-full" ? { ...ca, ...clientCert } : { ...ca, ...clientCert, checkServerIdentity: () => undefined };
}

/** The password of the first matching line of the password file (libpq's format: host:port:database:user:password, `*` matches anything). */
export function passwordFromFile(
  env: ConnectionEnv,
  target: { host: string; port: number; database: string; user: string },
): string | undefined {
  const path = env.PGPASSFILE ?? join(env.HOME ?? homedir(), ".pgpass");
  const stat = statSync(path, { throwIfNoEntry: false });
  // libpq ignores a password file that others can read; so does bulkcheck.
  if (!stat?.isFile() || (process.platform !== "win32" && (stat.mode & 0o077) !== 0)) return undefined;
  const wanted = [target.host, String(target.port), target.database, target.user];
  for (const line of readFileSync(path, "utf8").split(/\r?\n/)) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const fields = splitPasswordLine(line);
    if (fields.length < 5) continue;
    if (wanted.every((value, index) => fields[index] === "*" || fields[index] === value)) return fields[4];
  }
  return undefined;
}

/** A password file line's fields: `:` separates them, `\` escapes the next character. */
function splitPasswordLine(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  for (let at = 0; at < line.length; at++) {
    const char = line[at]!;
    if (char === "\\" && at + 1 < line.length) field += line[++at]!;
    else if (char === ":" && fields.length < 4) {
      fields.push(field);
      field = "";
    } else field += char;
  }
  return [...fields, field];
}

/** Node's and pg's ways of saying that the connection could not be made or was lost. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);
const LOST_CONNECTION =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/;
/** SQLSTATEs of a server that is away, going away or full: class 08 and these. */
const SERVER_AWAY = new Set(["57P01", "57P02", "57P03", "53300"]);

/**
 * The store's own error for a failure of the database, or the error itself when it is not
 * one (a bug). A database that cannot be reached or went away is StoreUnavailableError (exit
 * 7, like a service that stays unavailable: run the command again later); a URL, password,
 * certificate or privilege that is wrong is a UsageError (exit 2: the configuration needs
 * fixing). Messages name the store by its location, never with the password.
 */
export function storeFailure(error: unknown, location: string): unknown {
  if (error instanceof UsageError || error instanceof StoreUnavailableError || !(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  const sqlState = typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  if ((typeof code === "string" && NETWORK_CODES.has(code)) || LOST_CONNECTION.test(error.message)) {
    return new StoreUnavailableError(`The store at ${location} cannot be reached (${error.message}).`, { cause: error });
  }
  if (sqlState?.startsWith("08") || (sqlState && SERVER_AWAY.has(sqlState))) {
    return new StoreUnavailableError(`The store at ${location} is unavailable (${error.message}).`, { cause: error });
  }
  if (sqlState === "28P01" || sqlState === "28000") {
    return new UsageError(`The database at ${location} refused the login: ${error.message}.`, {
      hint: "Check the user and the password (in the URL, PGPASSWORD or ~/.pgpass).",
      cause: error,
    });
  }
  if (sqlState === "3D000") {
    return new UsageError(`The database at ${location} does not exist: ${error.message}.`, {
      hint: "Create it (createdb), or correct the store URL.",
      cause: error,
    });
  }
  if (sqlState === "42501") {
    return new UsageError(`The database at ${location} refused bulkcheck: ${error.message}.`, {
      hint: "bulkcheck needs its own schema `bulkcheck` (created by `bulkcheck store init`, or by an administrator who grants it to the store's user).",
      cause: error,
    });
  }
  if (/SSL|certificate|self[- ]signed|CERT_|ERR_TLS/i.test(`${String(code)} ${error.message}`)) {
    return new UsageError(`The TLS connection to ${location} failed: ${error.message}.`, {
      hint: "Check sslmode and sslrootcert in the store URL (sslmode=verify-full needs the server's CA certificate).",
      cause: error,
    });
  }
  return error;
}
