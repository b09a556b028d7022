// Types of bench/soak-drip.js for the test suite.

export interface DripRun {
  command: string;
  code: number;
  signal?: string | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

export declare function checkDripRuns(
  runs: DripRun[],
  timeoutSeconds: number,
): { ok: boolean; failures: string[]; figures: { runs: number; runs_past_bound: number; longest_run_s: number; max_overrun_s: number } };
