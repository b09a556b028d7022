import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { classifyConnectionError } from "../../src/api/retry.js";
import { createDefaultDispatcher, resolveTimeouts, DEFAULT_TIMEOUTS } from "../../src/api/transport.js";
import { API_KEY, sendEnvelope, startServer, type ScriptedServer } from "./scripted-server.js";

const coded = (code: string, extra: object = {}): Error => Object.assign(new Error(code), { code }, extra);

describe("classifyConnectionError", () => {
  it.each([
    ["ECONNREFUSED", coded("ECONNREFUSED"), "refused", false],
    ["a connect timeout", coded("UND_ERR_CONNECT_TIMEOUT"), "connect-timeout", false],
    ["EHOSTUNREACH", coded("EHOSTUNREACH"), "unreachable", false],
    ["a temporary DNS failure", coded("EAI_AGAIN"), "unreachable", false],
    ["an unknown host", coded("ENOTFOUND"), "dns", false],
    ["ECONNRESET", coded("ECONNRESET"), "reset", true],
    ["EPIPE", coded("EPIPE"), "reset", true],
    ["other side closed", coded("UND_ERR_SOCKET"), "closed", true],
    ["a headers timeout", coded("UND_ERR_HEADERS_TIMEOUT"), "timeout", true],
    ["a body timeout", coded("UND_ERR_BODY_TIMEOUT"), "timeout", true],
    ["ETIMEDOUT, which may come mid-request", coded("ETIMEDOUT"), "timeout", true],
    ["a body shorter than its Content-Length", coded("UND_ERR_RES_CONTENT_LENGTH_MISMATCH"), "closed", true],
    ["a body stream closed before its end", coded("ERR_STREAM_PREMATURE_CLOSE"), "closed", true],
    ["an expired certificate", coded("CERT_HAS_EXPIRED"), "tls", false],
    ["a self-signed certificate", coded("DEPTH_ZERO_SELF_SIGNED_CERT"), "tls", false],
    ["a code found only in the cause", Object.assign(new Error("fetch failed"), { cause: coded("ECONNREFUSED") }), "refused", false],
    ["happy-eyeballs members", Object.assign(new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")]), {}), "refused", false],
    ["a reset wrapping a refusal", Object.assign(coded("UND_ERR_SOCKET"), { cause: coded("ECONNREFUSED") }), "closed", true],
    ["a closed dispatcher, which retrying cannot fix", coded("UND_ERR_CLOSED"), "other", true],
    ["an error without a code", new Error("boom"), "other", true],
    ["a non-error", "boom", "other", true],
  ])("classifies %s", (_name, error, reason, sent) => {
    expect(classifyConnectionError(error)).toMatchObject({ reason, sent });
  });
});

describe("timeouts", () => {
  it("fills in defaults for the timeouts not given", () => {
    expect(resolveTimeouts({ headersMs: 5 })).toEqual({ ...DEFAULT_TIMEOUTS, headersMs: 5 });
  });
});

describe("the default dispatcher", () => {
  let proxy: Server | undefined;
  let target: ScriptedServer | undefined;
  afterEach(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    await target?.close();
    proxy = target = undefined;
  });

  async function startTunnelProxy(): Promise<{ origin: string; tunnels: string[] }> {
    const tunnels: string[] = [];
    const sockets: Socket[] = [];
    proxy = createServer();
    proxy.on("connect", (req, client: Socket, head: Buffer) => {
      tunnels.push(req.url ?? "");
      const [host, port] = (req.url ?? "").split(":");
      const upstream = connect(Number(port), host, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      sockets.push(upstream, client);
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
      client.on("close", () => upstream.destroy());
    });
    proxy.on("close", () => sockets.forEach((s) => s.destroy()));
    await new Promise<void>((resolve) => proxy?.listen(0, "127.0.0.1", resolve));
    return { origin: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, tunnels };
  }

  it("sends requests through the configured HTTP proxy", async () => {
    const { origin, tunnels } = await startTunnelProxy();
    target = await startServer((req, res) => sendEnvelope(req, res, { code: 0, data: { balance_micros: 7 } }));
    const dispatcher = createDefaultDispatcher(resolveTimeouts(), { httpProxy: origin, noProxy: "" });
    const client = createClient({ baseUrl: target.origin, apiKey: API_KEY, dispatcher });
    expect(await client.getBalance()).toEqual({ balance_micros: 7 });
    await client.close();
    await dispatcher.close();
    expect(tunnels).toEqual([`127.0.0.1:${target.port}`]);
  });

  it("bypasses the proxy for hosts in NO_PROXY", async () => {
    const { origin, tunnels } = await startTunnelProxy();
    target = await startServer((req, res) => sendEnvelope(req, res, { code: 0, data: { balance_micros: 7 } }));
    const dispatcher = createDefaultDispatcher(resolveTimeouts(), { httpProxy: origin, noProxy: "127.0.0.1" });
    const client = createClient({ baseUrl: target.origin, apiKey: API_KEY, dispatcher });
    await client.getBalance();
    await dispatcher.close();
    expect(tunnels).toEqual([]);
    expect(target.hits).toHaveLength(1);
  });
});
