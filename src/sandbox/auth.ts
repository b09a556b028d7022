import { createHash, timingSafeEqual } from "node:crypto";

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/**
 * Returns a checker for the X-API-Key header. Both sides are hashed first so the
 * comparison is constant-time whatever the lengths; a repeated header never matches.
 */
export function createKeyCheck(expected: string): (given: string | string[] | undefined) => boolean {
  const expectedDigest = digest(expected);
  return (given) => typeof given === "string" && timingSafeEqual(expectedDigest, digest(given));
}
