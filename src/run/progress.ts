/** Progress display: a live bar on a terminal, a plain line every N tasks (or 10 s) elsewhere (CI logs). */
import cliProgress from "cli-progress";

export interface ProgressCounts {
  done: number;
  failed: number;
  dropped: number;
  tokens: number;
}

export interface Progress {
  start(total: number): void;
  update(c: ProgressCounts): void;
  /** A message that must not garble the bar. */
  log(message: string): void;
  stop(): void;
}

function rate(done: number, startedAt: number): number {
  const s = (Date.now() - startedAt) / 1000;
  return s > 0 ? done / s : 0;
}

function eta(done: number, total: number, startedAt: number): string {
  const r = rate(done, startedAt);
  if (r <= 0 || done >= total) return "-";
  const s = Math.round((total - done) / r);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
}

export function createProgress(mode: "auto" | "bar" | "log" | "none", stream: NodeJS.WriteStream = process.stderr): Progress {
  const useBar = mode === "bar" || (mode === "auto" && stream.isTTY === true);
  if (mode === "none") return { start() {}, update() {}, log: (m) => stream.write(m + "\n"), stop() {} };
  let total = 0;
  let startedAt = Date.now();
  if (useBar) {
    const bar = new cliProgress.SingleBar(
      {
        format: "{bar} {value}/{total} | {rate}/s | ETA {eta_h} | failed {failed} | dropped {dropped} | tokens {tokens}",
        hideCursor: true,
        stream,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    return {
      start(t) {
        total = t;
        startedAt = Date.now();
        bar.start(t, 0, { rate: "0.0", eta_h: "-", failed: 0, dropped: 0, tokens: 0 });
      },
      update(c) {
        const n = c.done + c.failed + c.dropped;
        bar.update(n, { rate: rate(n, startedAt).toFixed(1), eta_h: eta(n, total, startedAt), failed: c.failed, dropped: c.dropped, tokens: c.tokens });
      },
      log(m) {
        bar.stop();
        stream.write(m + "\n");
        bar.start(total, (bar as unknown as { value: number }).value ?? 0);
      },
      stop() {
        bar.stop();
      },
    };
  }
  let lastLine = 0;
  let lastN = 0;
  let every = 1;
  return {
    start(t) {
      total = t;
      startedAt = Date.now();
      lastLine = Date.now();
      every = Math.max(1, Math.ceil(t / 20));
      stream.write(`progress: 0/${t} tasks\n`);
    },
    update(c) {
      const n = c.done + c.failed + c.dropped;
      if (n === total || n - lastN >= every || Date.now() - lastLine >= 10_000) {
        lastN = n;
        lastLine = Date.now();
        stream.write(
          `progress: ${n}/${total} tasks (${c.done} ok, ${c.failed} failed, ${c.dropped} dropped) | ${rate(n, startedAt).toFixed(2)}/s | ETA ${eta(n, total, startedAt)} | ${c.tokens} tokens\n`,
        );
      }
    },
    log: (m) => stream.write(m + "\n"),
    stop() {},
  };
}
