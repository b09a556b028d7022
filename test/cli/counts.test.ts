import { describe, expect, it } from "vitest";
import { describeTask, TASK_COLUMNS, taskRow } from "../../src/cli/views/task-view.js";
import { boxedTable } from "../../src/results/format-table.js";
import type { Task } from "../../src/spec/task.js";

const task: Task = {
  id: "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53",
  product: "number_activity_batch",
  status: "success",
  country: "GB",
  total: 1125,
  success_cnt: 1103,
  failure_cnt: 22,
  created_at: "2025-01-15T09:00:00Z",
};

describe("counts shown to people", () => {
  it("have thousands separators in a task's line", () => {
    expect(describeTask(task)).toBe(`task ${task.id} success: 1,103 checked, 22 without result`);
    expect(describeTask({ ...task, status: "processing", preparing: true, success_cnt: undefined })).toBe(
      `task ${task.id} processing (preparing 1,125 lines)`,
    );
  });

  it("have them in the boxed status table, while the row itself (TSV when piped) keeps the digits", () => {
    expect(taskRow(task).slice(4, 7)).toEqual(["1125", "1103", "22"]);
    const table = boxedTable(TASK_COLUMNS, [taskRow(task)], { colour: false, width: 160 });
    expect(table).toMatch(/│ 1,125 +│ 1,103 +│ 22 +│/);
  });
});
