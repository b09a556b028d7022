import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { deliverWebhook, signWebhook, type DeliveryDeps } from "../../src/notify/webhook.js";
import { newWebhookSecret, webhookKey, webhookSecret } from "../../src/config/webhook-secret.js";
import { freePort, startServer } from "../api/scripted-server.js";

/** The specification's own example (standard-webhooks, libraries/javascript: "sign function works"). */
const SPEC = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

/** A clock that moves only when the delivery sleeps, and the sleeps it was asked for. */
function fakeDeps(): DeliveryDeps & { slept: number[] } {
  let ms = Date.UTC(2025, 0, 15);
  const slept: number[] = [];
  return {
    slept,
    now: () => ms,
    sleep: async (delay) => {
      slept.push(delay);
      ms += delay;
    },
    random: () => 0,
    signal: new AbortController().signal,
  };
}

describe("the Standard Webhooks signature", () => {
  it("is the specification's for its example", () => {
    expect(signWebhook(webhookKey(SPEC.secret), SPEC.id, SPEC.timestamp, SPEC.body)).toBe(SPEC.signature);
  });

  it("takes a secret with or without whsec_, keeps it as whsec_…, and generates 32-byte ones", () => {
    expect(webhookSecret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).toBe(SPEC.secret);
    expect(webhookSecret(` ${SPEC.secret}\n`)).toBe(SPEC.secret);
    const made = newWebhookSecret();
    expect(made).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(webhookKey(made)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(made);
  });

  it.each([[""], ["whsec_"], ["whsec_not base64!"], ["whsec_c2hvcnQ="], [`whsec_${Buffer.alloc(65).toString("base64")}`]])(
    "refuses %j without quoting it",
    (secret) => {
      expect(() => webhookSecret(secret)).toThrow(UsageError);
      try {
        webhookSecret(secret);
      } catch (error) {
        if (secret.length > 6) expect((error as Error).message).not.toContain(secret.slice(6));
      }
    },
  );
});

describe("a delivery", () => {
  it("retries a connection that fails with backoff, and gives up within its budget", async () => {
    const deps = fakeDeps();
    const port = await freePort();
    const end = await deliverWebhook(
      { url: new URL(`http://127.0.0.1:${port}/hook`), body: "{}", budgetMs: 5_000, userAgent: "test" },
      deps,
    );
    expect(end).toMatchObject({ type: "gave-up", attempts: 3 });
    expect(end.type === "gave-up" && end.last).toMatch(/refused/);
    expect(deps.slept).toEqual([1_000, 2_000]);
  });

  it("posts the body with the same webhook-id on every attempt, signed anew each time", async () => {
    const bodies: string[] = [];
    const server = await startServer(async (req, res, n) => {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      bodies.push(body);
      res.statusCode = n === 1 ? 503 : 204;
      res.end();
    });
    try {
      const key = webhookKey(SPEC.secret);
      const deps = fakeDeps();
      const end = await deliverWebhook(
        { url: new URL(`${server.origin}/h?x=1`), body: '{"a":1}', key, budgetMs: 30_000, userAgent: "test" },
        deps,
      );
      expect(end).toMatchObject({ type: "delivered", status: 204, attempts: 2 });
      expect(bodies).toEqual(['{"a":1}', '{"a":1}']);
      const [first, second] = server.hits;
      expect(first!.url).toBe("/h?x=1");
      expect(first!.headers["webhook-id"]).toBe(end.id);
      expect(second!.headers["webhook-id"]).toBe(end.id);
      expect(Number(second!.headers["webhook-timestamp"]) - Number(first!.headers["webhook-timestamp"])).toBe(1);
      for (const hit of server.hits) {
        const timestamp = Number(hit.headers["webhook-timestamp"]);
        expect(hit.headers["webhook-signature"]).toBe(signWebhook(key, end.id, timestamp, '{"a":1}'));
        expect(hit.headers["content-type"]).toBe("application/json");
      }
    } finally {
      await server.close();
    }
  });

  it("is not signed without a key (a chat's incoming webhook)", async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.end();
    });
    try {
      const end = await deliverWebhook({ url: new URL(server.origin), body: "{}", budgetMs: 1_000, userAgent: "test" }, fakeDeps());
      expect(end).toMatchObject({ type: "delivered", attempts: 1 });
      expect(server.hits[0]!.headers["webhook-signature"]).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
