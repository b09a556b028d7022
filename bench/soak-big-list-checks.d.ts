// Types of bench/soak-big-list-checks.js for the test suite.
import type { BigListFigures } from "./soak-big-list.js";

interface LedgerState {
  tasks: Array<{ id: string }>;
  ledger: Array<{ kind: string; micros: number }>;
  prices: Record<string, number>;
  stats: { faults_injected: Record<string, number> };
}

export interface BigListRun {
  code: number;
  stdout: string;
  stderr: string;
  wallMs: number;
  killed: boolean;
  /** The output file as the run left it, if any. */
  left: Buffer | undefined;
}

export interface BigList {
  name: string;
  product: string;
  parts: number;
  referenceRun: { code: number; stderr: string; bytes: Buffer | undefined };
  state: LedgerState;
  referenceState: LedgerState;
  runs: BigListRun[];
  stagingLeft: string[];
}

export declare function checkBigLists(input: { lists: BigList[]; timeoutSeconds: number; secret: string }): {
  failures: string[];
  figures: BigListFigures;
};
export declare function formatBigListFigures(figures: BigListFigures, wallMs: number): string;
