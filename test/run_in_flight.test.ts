import { describe, expect, it } from "vitest";
import { InFlightTasks } from "../src/run/in_flight.js";

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("InFlightTasks", () => {
  it("next() resolves when a task ends, which then leaves the set", async () => {
    const tasks = new InFlightTasks();
    const a = deferred();
    const b = deferred();
    tasks.add(a.promise);
    tasks.add(b.promise);
    expect(tasks.size).toBe(2);
    const next = tasks.next();
    b.resolve();
    await next;
    expect(tasks.size).toBe(1);
    a.resolve();
    await tasks.next();
    expect(tasks.size).toBe(0);
  });

  it("a failed task rejects the wait, and every later wait, with its error", async () => {
    const tasks = new InFlightTasks();
    const a = deferred();
    const b = deferred();
    tasks.add(a.promise);
    tasks.add(b.promise);
    const next = tasks.next();
    a.reject(new Error("disk full"));
    await expect(next).rejects.toThrow("disk full");
    await expect(tasks.next()).rejects.toThrow("disk full");
    b.resolve();
    await tasks.settled();
    expect(tasks.size).toBe(0);
  });

  it("a task that failed while nobody waited is reported by the next wait", async () => {
    const tasks = new InFlightTasks();
    const a = deferred();
    tasks.add(a.promise);
    a.reject(new Error("gone"));
    await tasks.settled();
    await expect(tasks.next()).rejects.toThrow("gone");
  });
});
