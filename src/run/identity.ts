import { createHash } from "node:crypto";
import type { Scope } from "../store/store.js";

/**
 * What the user asked for, as far as it decides which run a command belongs to: the
 * source (by path; stdin is one source), the product, the country (a code, `auto`, or
 * none) and every flag that changes how the list is read. Not the output: the same list
 * continued with another `-o` is the same run, written elsewhere.
 */
export interface RunCommand {
  /** Absolute path of the source, or undefined for stdin. */
  sourcePath: string | undefined;
  product: string;
  /** The --country flag as given (upper-cased), `auto`, or undefined. */
  country: string | undefined;
  defaultCountry?: string | undefined;
  column?: string | undefined;
  sheet?: string | undefined;
  requireCountryCode?: boolean | undefined;
  strictRegion?: boolean | undefined;
  digitsAs?: string | undefined;
  encoding?: string | undefined;
  /** For retry-failed: the task whose numbers are retried. */
  retryOf?: string | undefined;
  /** For a later product of a chain (submit --then): the products before it and the conditions (see chain/chain.ts's stepKey). */
  chain?: string | undefined;
}

/**
 * The identity of a command in a scope: two commands with the same identity are "the same
 * command", and the second continues the first's run while it is unfinished. Built from
 * the flags, never from what the list turned out to hold, so an edited list is recognised
 * as the same command's list having changed.
 */
export function runIdentity(scope: Scope, command: RunCommand): string {
  const parts = [
    "run/1",
    scope.baseUrl,
    scope.profile,
    command.sourcePath ?? "-",
    command.product,
    command.country ?? "",
    command.defaultCountry ?? "",
    command.column ?? "",
    command.sheet ?? "",
    command.requireCountryCode ? "1" : "",
    command.strictRegion ? "1" : "",
    command.digitsAs ?? "",
    command.encoding ?? "",
    command.retryOf ?? "",
    // Added only when there is one, so every run made before chains keeps its identity.
    ...(command.chain === undefined ? [] : [`chain:${command.chain}`]),
  ];
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

/** A part of a prepared list, as far as its identity goes: its numbers' hash and, under `--country auto`, its country. */
export interface ListPart {
  sha256: string;
  country?: string | undefined;
}

/**
 * The fingerprint of a prepared list: what was kept, in order (by each part's hash). Two
 * readings of a source give the same fingerprint exactly when they keep the same
 * numbers, so an edited name cell leaves it alone and a changed number does not.
 */
export function listFingerprint(parts: readonly ListPart[]): string {
  return createHash("sha256")
    .update(parts.map((part) => `${part.country ?? ""}:${part.sha256}`).join("\n"))
    .digest("hex");
}

/**
 * The idempotency key of a run's part: stable for the run (a continued run sends the same
 * key, so the service returns the task instead of creating another) and new for every new
 * run. The run id is random, so the key needs no secret; the part's hash binds it to the
 * bytes, so a different file can never be sent under it.
 */
export function partKey(runId: string, part: number, sha256: string): string {
  return `bc2-${createHash("sha256").update(`${runId}\n${part}\n${sha256}`).digest("hex").slice(0, 48)}`;
}
