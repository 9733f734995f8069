/** linkedAbort: one task signal aborted by its sources, its deadline or itself, and nothing left attached after dispose. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { linkedAbort } from "../src/core/abort.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("linkedAbort", () => {
  it("aborts with a source's reason and is not marked timed out", () => {
    const cancel = new AbortController();
    const linked = linkedAbort([cancel.signal], 60_000);
    expect(linked.signal.aborted).toBe(false);
    const reason = new Error("run interrupted");
    cancel.abort(reason);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe(reason);
    expect(linked.timedOut).toBe(false);
    linked.dispose();
  });

  it("starts aborted when a source already is", () => {
    const linked = linkedAbort([AbortSignal.abort("gone")]);
    expect(linked.signal.reason).toBe("gone");
  });

  it("times out with a TimeoutError, like AbortSignal.timeout", () => {
    vi.useFakeTimers();
    const linked = linkedAbort([new AbortController().signal], 1000);
    vi.advanceTimersByTime(999);
    expect(linked.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(linked.timedOut).toBe(true);
    expect(linked.signal.reason).toBeInstanceOf(DOMException);
    expect((linked.signal.reason as DOMException).name).toBe("TimeoutError");
  });

  it("keeps the first reason: a later source or deadline does not replace it", () => {
    vi.useFakeTimers();
    const cancel = new AbortController();
    const linked = linkedAbort([cancel.signal], 1000);
    const lost = new Error("sandbox lost");
    linked.abort(lost);
    cancel.abort(new Error("later"));
    vi.advanceTimersByTime(1000);
    expect(linked.signal.reason).toBe(lost);
    expect(linked.timedOut).toBe(true);
  });

  it("dispose removes its listener from the sources and its timer", () => {
    vi.useFakeTimers();
    const cancel = new AbortController();
    const added = vi.spyOn(cancel.signal, "addEventListener");
    const removed = vi.spyOn(cancel.signal, "removeEventListener");
    const linked = linkedAbort([cancel.signal], 1000);
    linked.dispose();
    expect(removed).toHaveBeenCalledWith("abort", added.mock.calls[0]![1]);
    cancel.abort();
    vi.advanceTimersByTime(2000);
    expect(linked.signal.aborted).toBe(false);
    expect(linked.timedOut).toBe(false);
  });
});
