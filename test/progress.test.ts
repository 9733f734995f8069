import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createProgress } from "../src/run/progress.js";

function fakeTerminal() {
  let text = "";
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(stream, {
    isTTY: true,
    columns: 160,
    rows: 40,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
  });
  return { stream, text: () => text };
}

describe("the terminal progress bar", () => {
  it("never shows a raw {placeholder}, also after a log line restarted it", () => {
    const t = fakeTerminal();
    const p = createProgress("bar", t.stream);
    p.start(10);
    p.update({ done: 3, failed: 1, dropped: 0, tokens: 1234 });
    p.log("stopping: something to say");
    p.update({ done: 4, failed: 1, dropped: 0, tokens: 1500 });
    p.log("another line");
    p.stop();
    const out = t.text();
    expect(out).toContain("stopping: something to say");
    expect(out).toContain("tokens 1500");
    expect(out).not.toMatch(/\{(rate|eta_h|failed|dropped|tokens|model)\}/);
  });
});
