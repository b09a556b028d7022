import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiCode } from "../spec/codes.js";
import type { SandboxCore } from "./core.js";
import { Exchange } from "./exchange.js";
import { applyFault } from "./fault-actions.js";
import type { FaultRoute } from "./faults.js";
import { INTERNAL_ERROR_STATUS, METHOD_NOT_ALLOWED_STATUS, NOT_FOUND_STATUS } from "./http-status.js";
import { matchRoute, type Route } from "./router.js";
import { handleScriptFaults, handleState, handleTaskLines } from "./routes/admin.js";
import { handleBalance } from "./routes/balance.js";
import { handleCheck } from "./routes/check.js";
import { handleResult } from "./routes/result.js";
import { handleSubmit } from "./routes/submit.js";

/** Which listener a request arrived on: the API origin, or the separate result origin. */
export type Listener = "api" | "results";

/**
 * The request handler of one listener. Per request: route, count, then
 * (API and admin) authenticate, (API and result) maybe inject a fault, then
 * serve. One log line is written when the response is over, whatever happened.
 * On the result origin only result downloads exist; with a separate result
 * origin, the API origin does not serve them.
 */
export function createRequestHandler(core: SandboxCore, listener: Listener): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const [path = "/", query = ""] = (req.url ?? "/").split("?", 2);
    const matched = matchRoute(path);
    const servedHere = listener === "results" ? matched.name === "result" : matched.name !== "result" || !core.options.separateResultOrigin;
    const route: Route = servedHere ? matched : { name: "unknown", methods: [] };
    const ex = new Exchange(req, res, path);
    ex.onClose(() => core.options.log(ex.logLine()));
    core.stats.countRequest(route.name);
    serve(ex, core, route, new URLSearchParams(query), listener).catch((error: unknown) => {
      if (core.lifetime.aborted || res.headersSent) return ex.drop();
      ex.mark("internal-error");
      ex.envelope(ApiCode.MAINTENANCE, `internal sandbox error: ${(error as Error).message}`, {}, {}, INTERNAL_ERROR_STATUS);
    });
  };
}

async function serve(ex: Exchange, core: SandboxCore, route: Route, query: URLSearchParams, listener: Listener): Promise<void> {
  if (route.name === "unknown") {
    if (listener === "results") return ex.xml(NOT_FOUND_STATUS, "NoSuchKey", "The specified key does not exist.");
    return ex.envelope(ApiCode.UNSUPPORTED_OR_CONFLICT, `no such endpoint: ${ex.req.method ?? ""} ${ex.path}`, {}, {}, NOT_FOUND_STATUS);
  }
  // The webhook receiver stands in for a user's own server: no API key, no faults, its own answers.
  if (route.name === "webhooks") return core.webhooks.handle(ex);
  if (!route.methods.includes(ex.req.method ?? "")) {
    const allow = { allow: route.methods.join(", ") };
    if (route.name === "result") return ex.send(METHOD_NOT_ALLOWED_STATUS, allow, "", `http=${METHOD_NOT_ALLOWED_STATUS}`);
    return ex.envelope(
      ApiCode.UNSUPPORTED_OR_CONFLICT,
      `method ${ex.req.method ?? ""} not allowed here`,
      {},
      allow,
      METHOD_NOT_ALLOWED_STATUS,
    );
  }
  if (route.name === "result") {
    if (listener === "results" && ex.req.headers["x-api-key"] !== undefined) core.stats.countKeyOnResultHost();
  } else if (!core.keyMatches(ex.req.headers["x-api-key"])) {
    return ex.envelope(ApiCode.UNAUTHORIZED, "missing or invalid API key: send it in the X-API-Key header");
  }
  if (route.name === "admin-state") return handleState(ex, core);
  if (route.name === "admin-faults") return handleScriptFaults(ex, core);
  if (route.name === "admin-task-lines") return handleTaskLines(ex, core, route.param!);
  const draw = core.faults.draw(route.name);
  if (draw) {
    core.stats.countFault(draw.kind);
    const effect = await applyFault(ex, draw, { retryAfterSeconds: core.options.retryAfterSeconds, lifetime: core.lifetime });
    if (effect === "handled") return;
  }
  return dispatch(ex, core, route.name, route.param ?? "", query);
}

function dispatch(ex: Exchange, core: SandboxCore, route: FaultRoute, param: string, query: URLSearchParams): Promise<void> {
  switch (route) {
    case "submit":
      return handleSubmit(ex, core);
    case "check":
      return handleCheck(ex, core, param);
    case "balance":
      return handleBalance(ex, core);
    case "result":
      return handleResult(ex, core, param, query);
  }
}
