// Types of bench/soak-checks.js for the test suite.
import type { SoakFigures } from "./soak.js";

export interface SoakRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface SoakList {
  seed: number;
  name: string;
  product: string;
  size: number;
  reference?: { code: number; stderr?: string; bytes: Buffer | undefined };
}

export interface SoakFlow {
  index: number;
  list: SoakList;
  output: string;
  runs: SoakRun[];
}

export interface SoakSandbox {
  seed: number;
  state: {
    tasks: Array<{ id: string; product: string; submitted_lines?: number; status: string; success_cnt?: number }>;
    ledger: Array<{ kind: string }>;
    prices: Record<string, number>;
    start_balance_micros: number;
    balance_micros: number;
    reserved_micros: number;
    stats: { faults_injected: Record<string, number | undefined> };
  };
}

export declare function checkSoak(input: {
  lists: SoakList[];
  flows: SoakFlow[];
  sandboxes: SoakSandbox[];
  journals?: Array<{ seed: number; path: string }>;
  secret?: string;
  /** The service's smallest task: a task of that size re-checks a repeated list's numbers without a result. */
  minTaskSize?: number;
}): { failures: string[]; figures: SoakFigures };
export declare function exit7Reason(stderr: string): string;
export declare function sameResults(output: Buffer, reference: Buffer): boolean;
export declare function countRetries(stderr: string): number;
export declare function formatFigures(figures: SoakFigures, wallMs: number): string;
