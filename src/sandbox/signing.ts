import { createHmac, timingSafeEqual } from "node:crypto";

export type LinkVerdict = "ok" | "expired" | "bad-signature";

/**
 * Bearer links to result files, signed like a storage CDN's pre-signed URLs:
 * `{origin}/results/{name}?expires={unix seconds}&sig={hmac}` with an HMAC-SHA256
 * over name and expiry under a secret that lives only as long as the sandbox.
 */
export class ResultLinks {
  constructor(
    private readonly secret: string,
    private readonly origin: string,
    private readonly ttlSeconds: number,
  ) {}

  /** A fresh link valid for the TTL from `nowMs`. */
  urlFor(name: string, nowMs: number): string {
    const expires = Math.floor(nowMs / 1000) + Math.ceil(this.ttlSeconds);
    return `${this.origin}/results/${name}?expires=${expires}&sig=${this.sign(name, expires)}`;
  }

  verify(name: string, expires: string | null, sig: string | null, nowMs: number): LinkVerdict {
    if (expires === null || sig === null || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(sig)) return "bad-signature";
    const expected = Buffer.from(this.sign(name, Number(expires)), "hex");
    if (!timingSafeEqual(expected, Buffer.from(sig, "hex"))) return "bad-signature";
    return Math.floor(nowMs / 1000) > Number(expires) ? "expired" : "ok";
  }

  private sign(name: string, expires: number): string {
    return createHmac("sha256", this.secret).update(`${name}\n${expires}`).digest("hex");
  }
}
