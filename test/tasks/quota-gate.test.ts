import { describe, expect, it } from "vitest";
import { QuotaGate } from "../../src/tasks/quota-gate.js";

describe("QuotaGate", () => {
  it("lets every upload start until the service first answers 42900", () => {
    const gate = new QuotaGate();
    expect([gate.tryStart(), gate.tryStart(), gate.tryStart()]).toEqual([true, true, true]);
    expect(gate.closed).toBe(false);
  });

  it("after a 42900, lets one upload start per task seen finishing", () => {
    const gate = new QuotaGate();
    gate.refused();
    expect(gate.closed).toBe(true);
    expect(gate.tryStart()).toBe(false);
    gate.taskFinished();
    gate.taskFinished();
    expect(gate.closed).toBe(false);
    expect([gate.tryStart(), gate.tryStart(), gate.tryStart()]).toEqual([true, true, false]);
    expect(gate.closed).toBe(true);
  });

  it("forgets the room a finished task made when another 42900 says there is none", () => {
    const gate = new QuotaGate();
    gate.refused();
    gate.taskFinished();
    gate.refused();
    expect(gate.tryStart()).toBe(false);
  });

  it("keeps no room from tasks that finished before any 42900", () => {
    const gate = new QuotaGate();
    gate.taskFinished();
    gate.refused();
    expect(gate.tryStart()).toBe(false);
  });
});
