// Types of bench/soak.js for the test suite (test/soak/soak.test.ts).

export declare const SOAK_FAULTS: readonly string[];

export interface SoakOptions {
  /** Full flows to run (default 200). */
  flows?: number;
  /** Flows running at once (default 4). */
  parallel?: number;
  /** Chaos sandboxes, one per seed (default flows / 20). */
  seeds?: number;
  firstSeed?: number;
  /** Share of requests answered with a fault (default 0.3). */
  chaos?: number;
  faults?: readonly string[];
  /** Re-runs of a flow that exited 7 (default 4). */
  reruns?: number;
  /** Every n-th flow re-runs an earlier list (default 5). */
  repeatEvery?: number;
  /** Numbers in the smallest list (default 500). */
  minSize?: number;
  log?: (line: string) => void;
  keep?: boolean;
}

export interface SoakFigures {
  flows: number;
  runs: number;
  lists: number;
  seeds: number[];
  tasks: number;
  faults: Record<string, number>;
  faults_total: number;
  retries: number;
  download_restarts: number;
  tolerated_failed_checks: number;
  duplicates: number;
  key_leaks: number;
  stray_tasks: number;
  corrupt_outputs: number;
  missing_outputs: number;
  exit_codes: Record<string, number>;
  final_exit_codes: Record<string, number>;
  exit7_reasons: Record<string, number>;
}

export interface SoakReport {
  ok: boolean;
  failures: string[];
  figures: SoakFigures;
  wallMs: number;
  work: string | undefined;
}

export declare function runSoak(options?: SoakOptions): Promise<SoakReport>;
