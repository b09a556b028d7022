import { setFlagsFromString } from "node:v8";

/**
 * V8 settings bulkcheck tunes for itself. Each takes effect only for what V8 does
 * after it is set (compile a wasm module, grow the young generation), so each is
 * set where that work starts. Measured with bench/upload-bench.js on Node 20, 22 and 24.
 */
export const V8_TUNING = {
  /**
   * undici parses HTTP with llhttp compiled to wasm. Tiering it up to TurboFan took
   * 35 MB of compiler memory on a background thread mid-transfer (a third of a 1M-row
   * download's peak) and a core the transfer needed; the baseline code keeps up.
   */
  httpParser: "--liftoff-only",
  /**
   * Preparation allocates short-lived strings quickly, so V8 grows the young
   * generation to its ceiling (32 MB on Node 20, 64 MB on 24), more than any
   * structure preparation keeps. Keeping it at its initial size costs preparation
   * ~10% more time in scavenges.
   */
  preparation: "--semi-space-growth-factor=1",
} as const;

const applied = new Set<string>();

/** Sets a flag of V8_TUNING once. */
export function tuneV8(flag: (typeof V8_TUNING)[keyof typeof V8_TUNING]): void {
  if (applied.has(flag)) return;
  applied.add(flag);
  setFlagsFromString(flag);
}
