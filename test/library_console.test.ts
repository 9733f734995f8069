import { afterAll, describe, expect, it } from "vitest";
import { captureLibraryConsole, tieConsoleToTasks, withConsoleNotes } from "../src/run/library_console.js";

const original = {
  error: console.error,
  warn: console.warn,
  log: console.log,
  info: console.info,
  debug: console.debug,
};
afterAll(() => Object.assign(console, original));

const tick = () => new Promise((r) => setTimeout(r, 1));

describe("console output printed by libraries in a worker thread", () => {
  captureLibraryConsole();

  it("is kept with the task that printed it, also across awaits of tasks running at once", async () => {
    tieConsoleToTasks(true);
    const task = (name: string) =>
      withConsoleNotes(async () => {
        await tick();
        console.error(`dump of ${name}`);
        await tick();
        console.warn(`second line of ${name}`);
        return name;
      });
    const [a, b] = await Promise.all([task("a"), task("b")]);
    expect(a).toEqual({ value: "a", notes: ["dump of a", "second line of a"] });
    expect(b).toEqual({ value: "b", notes: ["dump of b", "second line of b"] });
  });

  it("without tying, goes to the next task that ends on the thread, marked as not necessarily its own", async () => {
    tieConsoleToTasks(false);
    try {
      const first = await withConsoleNotes(async () => {
        console.error("from a library");
        return 1;
      });
      expect(first.value).toBe(1);
      expect(first.notes).toEqual(["(printed on its worker thread, maybe by another task) from a library"]);
      const next = await withConsoleNotes(async () => 2);
      expect(next.notes).toEqual([]);
    } finally {
      tieConsoleToTasks(true);
    }
  });
});
