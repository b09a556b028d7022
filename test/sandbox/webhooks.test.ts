import { afterEach, describe, expect, it } from "vitest";
import { signWebhook, webhookSignatureMatches } from "../../src/notify/webhook.js";
import { startHarness, type Harness } from "./helpers.js";

/** The sandbox's webhook receiver (issue 30, point 2): where --notify can be tried without a server of one's own. */
const KEY = Buffer.alloc(32, 7);
const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

async function harness(...args: Parameters<typeof startHarness>): Promise<Harness> {
  const h = await startHarness(...args);
  harnesses.push(h);
  return h;
}

/** A delivery as bulkcheck signs it, signed with `key`. */
function signed(key: Buffer, body: string, id = "msg_1", timestamp = 1_736_931_600): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signWebhook(key, id, timestamp, body),
  };
}

describe("the sandbox's webhook receiver", () => {
  it("records each delivery without an API key, verified with the secret it is given, and lists them oldest first", async () => {
    const h = await harness({ verifyWebhook: (d) => webhookSignatureMatches(KEY, d.id, d.timestamp, d.body, d.signature) });
    expect(h.sandbox.webhookUrl).toBe(`${h.sandbox.url}/webhooks`);
    const body = '{"type":"bulkcheck.command.ended"}';
    const genuine = await fetch(h.sandbox.webhookUrl, { method: "POST", headers: signed(KEY, body), body });
    expect(genuine.status).toBe(200);
    expect(await genuine.json()).toEqual({ received: "msg_1", verified: true });
    const forged = await fetch(`${h.sandbox.webhookUrl}/nightly`, {
      method: "POST",
      headers: signed(Buffer.alloc(32, 8), body, "msg_2"),
      body,
    });
    expect(forged.status).toBe(200);
    await fetch(h.sandbox.webhookUrl, { method: "POST", body: "unsigned" });
    const listed = (await (await fetch(h.sandbox.webhookUrl)).json()) as { deliveries: unknown[] };
    expect(listed.deliveries).toEqual([
      {
        path: "/webhooks",
        received_at: "2025-01-15T09:00:00.000Z",
        id: "msg_1",
        timestamp: "1736931600",
        signature: signed(KEY, body)["webhook-signature"],
        body,
        verified: true,
      },
      expect.objectContaining({ path: "/webhooks/nightly", id: "msg_2", verified: false }),
      expect.objectContaining({ id: "", signature: "", body: "unsigned", verified: false }),
    ]);
    expect(h.sandbox.webhooks()).toEqual(listed.deliveries);
    expect(h.logs.filter((line) => line.startsWith("POST /webhooks"))).toEqual([
      expect.stringMatching(/^POST \/webhooks http=200 \d+ms webhook msg_1 verified$/),
      expect.stringMatching(/^POST \/webhooks\/nightly http=200 \d+ms webhook msg_2 NOT verified$/),
      expect.stringMatching(/^POST \/webhooks http=200 \d+ms webhook \(no webhook-id\) NOT verified$/),
    ]);
  });

  it("says nothing of the signature when it knows no secret, and is never faulted by chaos", async () => {
    const h = await harness({ chaos: 1 });
    const body = "{}";
    const answer = await fetch(h.sandbox.webhookUrl, { method: "POST", headers: signed(KEY, body), body });
    expect(answer.status).toBe(200);
    expect(h.sandbox.webhooks()).toEqual([expect.objectContaining({ id: "msg_1", verified: null })]);
    expect(h.logs.at(-1)).toMatch(/webhook msg_1 unverified \(no webhook secret known\)$/);
  });

  it("answers 405 to other methods and 413 to a body over 1 MB, recording neither", async () => {
    const h = await harness();
    expect((await fetch(h.sandbox.webhookUrl, { method: "PUT", body: "{}" })).status).toBe(405);
    expect((await fetch(`${h.sandbox.webhookUrl}/x`)).status).toBe(405);
    expect((await fetch(h.sandbox.webhookUrl, { method: "POST", body: "x".repeat(1024 * 1024 + 1) })).status).toBe(413);
    expect(h.sandbox.webhooks()).toEqual([]);
  });
});
