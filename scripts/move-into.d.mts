// Types of scripts/move-into.mjs for the test suite (test/scripts/move-into.test.ts).

export declare const STAGE_PREFIX: string;
/** A fresh staging directory for this process's build inside `target`; stages of builds no longer running are removed. */
export declare function stageFor(target: string): string;
/** Renames every file of `stage` over its path in `target`, then removes what `stage` did not have, then `stage`. */
export declare function moveInto(stage: string, target: string): void;
