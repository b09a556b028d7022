/**
 * The parts of undici the client uses, loaded from their own modules. The
 * package's index loads every dispatcher, mock, cache store and interceptor
 * (~70 ms on every networked command); the proxy agent and the request API take
 * ~27 ms. The API methods are attached to Dispatcher.prototype exactly as the
 * index does (undici is pinned; test/api/undici-parts.test.ts checks that these
 * are the very classes the package exports).
 */
import { createRequire } from "node:module";
import type * as Undici from "undici";
import { V8_TUNING, tuneV8 } from "../v8-flags.js";

const load = createRequire(import.meta.url);
tuneV8(V8_TUNING.httpParser);

const { prototype } = load("undici/lib/dispatcher/dispatcher.js") as typeof Undici.Dispatcher;
Object.assign(prototype, load("undici/lib/api/index.js"));

export const EnvHttpProxyAgent = load("undici/lib/dispatcher/env-http-proxy-agent.js") as typeof Undici.EnvHttpProxyAgent;

/** undici's FormData (never the global one, whose class a different undici owns). */
export function undiciFormData(): typeof Undici.FormData {
  return (load("undici/lib/web/fetch/formdata.js") as { FormData: typeof Undici.FormData }).FormData;
}
