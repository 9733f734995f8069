/** The one timeout+abort watch every backend's command runner uses (tools/environments/shell/command_stop.ts). */
import { describe, expect, it } from "vitest";
import { CommandStop, INTERRUPT_EXIT_CODE, TIMEOUT_EXIT_CODE } from "../tools/environments/shell/command_stop.js";

describe("CommandStop", () => {
  it("a timeout calls stop once and turns the exit code into 124", async () => {
    let stops = 0;
    let limits!: CommandStop;
    await new Promise<void>((resolve) => {
      limits = new CommandStop({ timeoutMs: 5 }, () => {
        stops++;
        resolve();
      });
    });
    limits.dispose();
    expect(stops).toBe(1);
    expect(limits.timedOut).toBe(true);
    expect(limits.aborted).toBe(false);
    expect(limits.stopped).toBe(true);
    expect(limits.exitCode(0)).toBe(TIMEOUT_EXIT_CODE);
  });

  it("an abort calls stop and turns the exit code into 130; one already aborted stops at once", () => {
    const controller = new AbortController();
    let stops = 0;
    const limits = new CommandStop({ signal: controller.signal }, () => stops++);
    expect(limits.stopped).toBe(false);
    expect(limits.exitCode(3)).toBe(3);
    controller.abort();
    expect(stops).toBe(1);
    expect(limits.exitCode(3)).toBe(INTERRUPT_EXIT_CODE);
    limits.dispose();

    let early = 0;
    const already = new CommandStop({ signal: controller.signal, timeoutMs: 0 }, () => early++);
    expect(early).toBe(1);
    expect(already.aborted).toBe(true);
    expect(already.timedOut).toBe(false);
    already.dispose();
  });

  it("after dispose neither the timer nor the signal stops the command", async () => {
    const controller = new AbortController();
    let stops = 0;
    const limits = new CommandStop({ signal: controller.signal, timeoutMs: 5 }, () => stops++);
    limits.dispose();
    controller.abort();
    await new Promise((r) => setTimeout(r, 30));
    expect(stops).toBe(0);
    expect(limits.stopped).toBe(false);
    expect(limits.exitCode(7)).toBe(7);
  });
});
