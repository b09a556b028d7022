import type { FaultKind } from "./faults.js";
import type { RouteName } from "./router.js";

export interface StatsSnapshot {
  /** Every request either listener received, admin ones included. */
  requests: number;
  by_route: Partial<Record<RouteName, number>>;
  faults_injected: Partial<Record<FaultKind, number>>;
  /** Checks of a processing task less than 30 s after its previous submit or check. */
  fast_polls: number;
  /** Result downloads on the separate result origin that carried an X-API-Key header (a client leaking its key to a CDN). */
  api_key_sent_to_result_host: number;
  slots_in_flight: number;
}

/** Counters behind `stats` in `GET /_sandbox/state`. */
export class Stats {
  private requests = 0;
  private readonly byRoute: Partial<Record<RouteName, number>> = {};
  private readonly faults: Partial<Record<FaultKind, number>> = {};
  private fastPolls = 0;
  private keyOnResultHost = 0;

  countRequest(route: RouteName): void {
    this.requests += 1;
    this.byRoute[route] = (this.byRoute[route] ?? 0) + 1;
  }

  countFault(kind: FaultKind): void {
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
  }

  countFastPoll(): void {
    this.fastPolls += 1;
  }

  countKeyOnResultHost(): void {
    this.keyOnResultHost += 1;
  }

  snapshot(slotsInFlight: number): StatsSnapshot {
    return {
      requests: this.requests,
      by_route: { ...this.byRoute },
      faults_injected: { ...this.faults },
      fast_polls: this.fastPolls,
      api_key_sent_to_result_host: this.keyOnResultHost,
      slots_in_flight: slotsInFlight,
    };
  }
}
