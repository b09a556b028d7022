import { join } from "node:path";
import { ApiError } from "../api/errors.js";
import type { ApiClient, ClientEvent, ResultDownload } from "../api/types.js";
import { configDir, stateDir } from "../config/paths.js";
import { shownSetting } from "../config/settings.js";
import {
  DEFAULT_PROFILE,
  isLoopback,
  refusedKeyHint,
  resolveApiKey,
  resolveBaseUrl,
  resolveLedger,
  resolveLimits,
  resolvePrices,
  resolveStoreUrl,
  type Source,
} from "../config/resolve.js";
import { ConfigStore } from "../config/store.js";
import { AuthError } from "../errors.js";
import { ApiCode } from "../spec/codes.js";
import type { Store } from "../store/store.js";
import { ownLease } from "../run/lease.js";
import { createPrinter, type Context, type GlobalOptions, type Runtime } from "./context.js";
import { CommandDeadline } from "./deadline.js";
import { CommandOutcome } from "./outcome.js";
import type { Printer } from "./printer.js";
import { describeEvent, describeRetry } from "./request-log.js";

/** The API client loads undici: only commands that talk to the service (or name it, see scope) pay for that. */
const apiClient = () => import("../api/client.js");
/** --query loads the jmespath package: only commands given it pay for that. */
const jsonQueries = () => import("./json-query.js");

/**
 * The Context of one run of a command, from the parsed global flags.
 * @throws UsageError for a --query that cannot work (see jsonQuery), before the command runs.
 */
export async function createContext(runtime: Runtime, globals: GlobalOptions, argv: readonly string[] = []): Promise<Context> {
  const printer = createPrinter(runtime, globals);
  if (globals.query !== undefined) printer.filterJson((await jsonQueries()).jsonQuery(globals.query, globals.json));
  return buildContext(runtime, globals, printer, argv);
}

/**
 * Wires the libraries a command may need, each created on first use so that a
 * command pays only for what it touches.
 */
export function buildContext(runtime: Runtime, globals: GlobalOptions, printer: Printer, argv: readonly string[] = []): Context {
  const profileName = globals.profile || runtime.env.BULKCHECK_PROFILE || DEFAULT_PROFILE;
  let store: ConfigStore | undefined;
  let opened: Promise<Store> | undefined;
  let client: ApiClient | undefined;
  let keySource: Source | undefined;
  const deadline = new CommandDeadline(runtime, globals.timeout);
  const requests = { inFlight: 0 };
  deadline.watchRequests(() => requests.inFlight);

  const configStore = (): ConfigStore => {
    if (!store) {
      store = new ConfigStore(configDir(runtime.env));
      const warning = store.permissionWarning();
      if (warning) printer.warn(warning);
    }
    return store;
  };
  const config = () => Promise.resolve(configStore());
  const resolveInput = async () => ({
    env: runtime.env,
    profileName,
    profile: (await config()).profile(profileName),
    baseUrlFlag: globals.baseUrl,
  });
  const baseUrl = async () => resolveBaseUrl(await resolveInput()).value;
  // A team's PostgreSQL when a URL is configured, else the embedded SQLite file in the state directory.
  const storeLocation = async () => resolveStoreUrl(runtime.env, (await resolveInput()).profile) ?? join(stateDir(runtime.env), STORE_FILE);

  return {
    ...runtime,
    signal: deadline.signal,
    deadline,
    printer,
    globals,
    argv,
    profileName,
    outcome: new CommandOutcome(),
    config,
    baseUrl,
    storeLocation,
    store() {
      opened ??= storeLocation().then((location) => openStore(runtime, printer, location, deadline));
      return opened;
    },
    async scope() {
      const { normaliseBaseUrl } = await apiClient();
      return { baseUrl: normaliseBaseUrl(await baseUrl()).href.replace(/\/+$/, ""), profile: profileName };
    },
    async client() {
      if (client) return client;
      const input = await resolveInput();
      const url = resolveBaseUrl(input);
      const key = resolveApiKey(input);
      keySource = key.source;
      warnIfClearText(printer, url.value);
      printer.debug(
        `using ${shownSetting("base-url", url.value)} (from ${url.source}) with key ${shownSetting("api-key", key.value)} (from ${key.source})`,
      );
      const { createClient } = await apiClient();
      client = countingRequests(
        requests,
        createClient({
          baseUrl: url.value,
          apiKey: key.value,
          sleep: runtime.sleep,
          now: runtime.now,
          random: runtime.random,
          signal: deadline.signal,
          ...(globals.requestTimeout === undefined ? {} : { timeouts: requestTimeouts(globals.requestTimeout) }),
          onEvent: (event) => reportEvent(printer, event),
        }),
      );
      return client;
    },
    async limits() {
      return resolveLimits((await resolveInput()).profile);
    },
    async prices() {
      return resolvePrices((await resolveInput()).profile);
    },
    async ledgerSettings() {
      return resolveLedger((await resolveInput()).profile);
    },
    explain(error, resume) {
      const explained = deadline.explain(error, resume);
      if (keySource === undefined || !(explained instanceof ApiError) || explained.apiCode !== ApiCode.UNAUTHORIZED) return explained;
      return new AuthError(explained.message, { hint: refusedKeyHint(keySource, profileName), cause: explained });
    },
    async dispose() {
      deadline.dispose();
      await client?.close();
      await (await opened?.catch(() => undefined))?.close();
    },
  };
}

/**
 * The store at `location` (see Context.storeLocation), with the journal of 0.1 adopted into
 * it as it opens (see openStoreAdopting). Connecting ends within what --timeout leaves (a server that never answers
 * within it is exit 8, as any work --timeout stops; within its own connect_timeout, exit 7, unavailable), and at once
 * on Ctrl-C or SIGTERM.
 */
async function openStore(runtime: Runtime, printer: Printer, location: string, deadline: CommandDeadline): Promise<Store> {
  // The embedded store loads libsql (and a team's, pg): only commands that open the store pay.
  const { openStoreAdopting } = await import("../store/open.js");
  const { store, adopted: imported } = await openStoreAdopting(
    location,
    runtime.env,
    { stateDir: stateDir(runtime.env), nowMs: runtime.now(), lease: ownLease() },
    { withinMs: deadline.remainingMs(), signal: runtime.signal },
  ).catch((error: unknown) => {
    throw deadline.explainConnecting(error);
  });
  for (const line of imported?.corruptLines ?? []) printer.warn(`skipping corrupt journal line ${line} of bulkcheck 0.1's journal`);
  if (imported) {
    printer.note(
      `Imported ${imported.runs} submission(s) with ${imported.tasks} task(s) from the journal of bulkcheck 0.1 into ${store.location}; the journal is kept as ${imported.movedTo}.`,
    );
  }
  return store;
}

/** The embedded store's file in the state directory. */
export const STORE_FILE = "bulkcheck.db";

function warnIfClearText(printer: Printer, baseUrl: string): void {
  if (new URL(baseUrl).protocol === "http:" && !isLoopback(baseUrl)) {
    printer.warn(`${baseUrl} is plain http: the API key travels in clear text. Use https://.`);
  }
}

/** --request-timeout sets how long a response may take to start, and its body to arrive. */
function requestTimeouts(seconds: number) {
  return { headersMs: seconds * 1000, bodyMs: seconds * 1000 };
}

/** Every retry wait is one line for humans (not with --quiet); --verbose adds each request. */
function reportEvent(printer: Printer, event: ClientEvent): void {
  if (event.type === "retry") printer.note(describeRetry(event));
  printer.debug(describeEvent(event));
}

/**
 * `client`, counting in `requests` the requests to the service in flight (a result's until its
 * body is read or destroyed): what a --timeout that runs out says it stopped (see
 * CommandDeadline.watchRequests).
 */
function countingRequests(requests: { inFlight: number }, client: ApiClient): ApiClient {
  const counted = async <T>(request: () => Promise<T>): Promise<T> => {
    requests.inFlight++;
    try {
      return await request();
    } finally {
      requests.inFlight--;
    }
  };
  return {
    submitTask: (input) => counted(() => client.submitTask(input)),
    checkTask: (id) => counted(() => client.checkTask(id)),
    getBalance: () => counted(() => client.getBalance()),
    async openResult(url) {
      requests.inFlight++;
      let download: ResultDownload;
      try {
        download = await client.openResult(url);
      } catch (error) {
        requests.inFlight--;
        throw error;
      }
      download.body.once("close", () => requests.inFlight--);
      return download;
    },
    close: () => client.close(),
  };
}
