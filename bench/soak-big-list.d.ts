// Types of bench/soak-big-list.js and bench/soak-big-list-checks.js for the test suite.
import type { SoakFigures } from "./soak.js";

export interface BigListOptions {
  /** Lists, each through its own chaos sandbox (default 20). */
  lists?: number;
  parallel?: number;
  /** Parts per list (default 8) of `partSize` numbers (default 25). */
  parts?: number;
  partSize?: number;
  /** The sandbox's quota of unfinished tasks (default 3). */
  maxUnfinished?: number;
  chaos?: number;
  faults?: readonly string[];
  /** Kills per list: 1 to this many (default 3), each within `killWithinMs` of the start. */
  maxKills?: number;
  killWithinMs?: number;
  /** Runs after the kills that may follow an exit 7 or 8 (default 20). */
  reruns?: number;
  /** --timeout of each run, seconds (default 120). */
  timeout?: number;
  firstSeed?: number;
  log?: (line: string) => void;
  keep?: boolean;
}

export interface BigListFigures extends Pick<SoakFigures, "exit_codes" | "final_exit_codes" | "exit7_reasons"> {
  lists: number;
  runs: number;
  killed_runs: number;
  tasks: number;
  parts: number;
  duplicate_tasks: number;
  numbers_charged_twice: number;
  partial_or_corrupt_outputs: number;
  hung_runs: number;
  longest_run_s: number;
  runs_that_waited_for_quota: number;
  faults_total: number;
  staging_left: number;
}

export declare function runBigListSoak(
  options?: BigListOptions,
): Promise<{ ok: boolean; failures: string[]; figures: BigListFigures; work: string | undefined }>;
