/** Which engine errors a sandbox start retries, and how long it waits (no engine needed). */
import { describe, expect, it } from "vitest";
import { backOffMs, isTransientEngineError, withEngineRetry } from "../tools/environments/docker/docker_retry.js";

/** An error shaped like dockerode's: status code and the engine's JSON body. */
function engineError(statusCode: number, message: string): Error {
  return Object.assign(new Error(`(HTTP code ${statusCode}) ${message}`), { statusCode, json: { message } });
}
const socketError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("isTransientEngineError", () => {
  it("retries overload, conflicts of the moment, dropped connections and failed forks", () => {
    for (const err of [
      engineError(500, "Internal Server Error"),
      engineError(503, "service unavailable"),
      engineError(502, "bad gateway"),
      engineError(429, "too many requests"),
      engineError(409, "Conflict. The container name is already in use"),
      engineError(500, "fork/exec /usr/bin/runc: resource temporarily unavailable"),
      socketError("ECONNRESET", "socket hang up"),
      socketError("ECONNREFUSED", "connect ECONNREFUSED /var/run/docker.sock"),
      socketError("EPIPE", "write EPIPE"),
      new Error("socket hang up"),
    ]) {
      expect(isTransientEngineError(err), String(err)).toBe(true);
    }
  });

  it("does not retry what no retry can fix", () => {
    for (const err of [
      engineError(404, "No such image: nope:latest"),
      engineError(400, "invalid mount config for type volume"),
      engineError(500, 'OCI runtime create failed: exec: "sleep": executable file not found in $PATH'),
      engineError(500, "No such image: nope:latest"),
      engineError(401, "unauthorized"),
      new Error("shutting down: no new docker sandboxes"),
      new TypeError("x is not a function"),
    ]) {
      expect(isTransientEngineError(err), String(err)).toBe(false);
    }
  });
});

describe("backOffMs", () => {
  it("doubles per retry up to the cap, jittered within the upper half", () => {
    const policy = { attempts: 6, baseDelayMs: 250, maxDelayMs: 8000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backOffMs(n, policy, () => 1))).toEqual([
      250, 500, 1000, 2000, 4000, 8000, 8000,
    ]);
    expect([1, 2, 3].map((n) => backOffMs(n, policy, () => 0))).toEqual([125, 250, 500]);
  });
});

describe("withEngineRetry", () => {
  const policy = { attempts: 4, baseDelayMs: 1, maxDelayMs: 2 };

  it("retries transient failures, undoing each failed attempt, and reports every retry", async () => {
    let calls = 0;
    let undone = 0;
    const retries: number[] = [];
    const value = await withEngineRetry(
      async () => {
        if (++calls < 3) throw engineError(503, "busy");
        return "started";
      },
      { policy, onRetry: (r) => retries.push(r.attempt), beforeRetry: async () => void undone++ },
    );
    expect(value).toBe("started");
    expect(calls).toBe(3);
    expect(undone).toBe(2);
    expect(retries).toEqual([1, 2]);
  });

  it("gives up after the last attempt, at once on a deterministic error, and when told to", async () => {
    let calls = 0;
    await expect(
      withEngineRetry(
        async () => {
          calls++;
          throw engineError(500, "still busy");
        },
        { policy },
      ),
    ).rejects.toThrow("still busy");
    expect(calls).toBe(4);
    calls = 0;
    await expect(
      withEngineRetry(
        async () => {
          calls++;
          throw engineError(404, "No such image: x");
        },
        { policy },
      ),
    ).rejects.toThrow("No such image");
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      withEngineRetry(
        async () => {
          calls++;
          throw engineError(500, "busy");
        },
        { policy, giveUp: () => true },
      ),
    ).rejects.toThrow("busy");
    expect(calls).toBe(1);
  });

  it("stops waiting when the task's signal aborts", async () => {
    const ctl = new AbortController();
    const pending = withEngineRetry(
      async () => {
        throw engineError(503, "busy");
      },
      { policy: { attempts: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 }, signal: ctl.signal },
    );
    setTimeout(() => ctl.abort(new Error("task timed out")), 20);
    await expect(pending).rejects.toThrow("task timed out");
  });
});
