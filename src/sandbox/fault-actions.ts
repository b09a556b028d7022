import { setTimeout as delay } from "node:timers/promises";
import { API_CODE_MEANING } from "../spec/codes.js";
import type { Exchange } from "./exchange.js";
import type { FaultDraw } from "./faults.js";

const DEFAULT_SLOW_MS = 3_000;

const BAD_GATEWAY_PAGE =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

export interface FaultContext {
  retryAfterSeconds: number;
  /** Aborts a slow fault's delay when the sandbox closes. */
  lifetime: AbortSignal;
}

/**
 * Carries out a drawn fault. Returns "handled" when the fault answered (or
 * dropped) the request, "continue" when the request must still be served: after
 * a slow delay, or with drop-after-commit, malformed-after-commit, drop-mid-download or
 * endless-download armed on the exchange.
 */
export async function applyFault(ex: Exchange, draw: FaultDraw, context: FaultContext): Promise<"handled" | "continue"> {
  ex.mark(`fault=${draw.kind}`);
  switch (draw.kind) {
    case "42901":
    case "50303": {
      const code = Number(draw.kind);
      ex.envelope(code, API_CODE_MEANING[code] ?? "", {}, { "retry-after": draw.retryAfter ?? String(context.retryAfterSeconds) });
      return "handled";
    }
    case "50400":
    case "50300":
    case "42900": {
      const code = Number(draw.kind);
      ex.envelope(code, API_CODE_MEANING[code] ?? "");
      return "handled";
    }
    case "drop":
      ex.drop();
      return "handled";
    case "drop-mid-upload":
      // Reading has not started; take the first chunk, then cut the connection.
      ex.req.once("data", () => ex.drop());
      ex.req.once("end", () => ex.drop());
      return "handled";
    case "drop-after-commit":
      ex.armDropResponse();
      return "continue";
    case "malformed-after-commit":
      ex.armMalformedTask();
      return "continue";
    case "drop-mid-download":
      ex.body = "half";
      return "continue";
    case "endless-download":
      ex.body = "endless";
      return "continue";
    case "html":
      ex.send(502, { "content-type": "text/html" }, BAD_GATEWAY_PAGE, "http=502");
      return "handled";
    case "truncated-json": {
      const whole = JSON.stringify({ code: 0, msg: "success", data: { id: "0".repeat(32), status: "processing" } });
      ex.send(200, { "content-type": "application/json; charset=utf-8" }, whole.slice(0, Math.floor(whole.length / 2)), "http=200");
      return "handled";
    }
    case "no-code-envelope":
      ex.send(200, { "content-type": "application/json; charset=utf-8" }, JSON.stringify({ msg: "success", data: {} }), "http=200");
      return "handled";
    case "slow":
      await delay(draw.delayMs ?? DEFAULT_SLOW_MS, undefined, { signal: context.lifetime });
      return ex.closed ? "handled" : "continue";
  }
}
