/** Progress display: a live bar on a terminal, a plain line every N tasks (or 10 s) elsewhere (CI logs). */
import cliProgress from "cli-progress";

export interface ProgressCounts {
  done: number;
  failed: number;
  dropped: number;
  tokens: number;
  /** Run-wide model calls: retries, 429s and the connection limit (shown once something happened). */
  model?: { retries: number; rate_limited: number; endpoints: Record<string, { limit: number; max: number }> };
}

/** "| model retries 3, 429s 2, connections 2/8" when the scheduler retried or lowered a limit; else "". */
export function modelNote(c: ProgressCounts): string {
  const m = c.model;
  if (!m) return "";
  const lowered = Object.values(m.endpoints).filter((e) => e.limit < e.max);
  if (m.retries === 0 && m.rate_limited === 0 && lowered.length === 0) return "";
  const limits = lowered.map((e) => `connections ${e.limit}/${e.max}`);
  return ` | ${[`model retries ${m.retries}`, `429s ${m.rate_limited}`, ...limits].join(", ")}`;
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
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${s % 60}s`
      : `${s}s`;
}

export function createProgress(
  mode: "auto" | "bar" | "log" | "none",
  stream: NodeJS.WriteStream = process.stderr,
): Progress {
  const useBar = mode === "bar" || (mode === "auto" && stream.isTTY === true);
  if (mode === "none") return { start() {}, update() {}, log: (m) => stream.write(m + "\n"), stop() {} };
  let total = 0;
  let startedAt = Date.now();
  if (useBar) {
    const bar = new cliProgress.SingleBar(
      {
        format:
          "{bar} {value}/{total} | {rate}/s | ETA {eta_h} | failed {failed} | dropped {dropped} | tokens {tokens}{model}",
        hideCursor: true,
        stream,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    // Every redraw (a restart after a log line, a resize) gets the whole payload: a missing field would show
    // as its raw `{placeholder}`.
    let value = 0;
    let payload: Record<string, string | number> = {
      rate: "0.0",
      eta_h: "-",
      failed: 0,
      dropped: 0,
      tokens: 0,
      model: "",
    };
    return {
      start(t) {
        total = t;
        startedAt = Date.now();
        bar.start(t, 0, payload);
      },
      update(c) {
        value = c.done + c.failed + c.dropped;
        payload = {
          rate: rate(value, startedAt).toFixed(1),
          eta_h: eta(value, total, startedAt),
          failed: c.failed,
          dropped: c.dropped,
          tokens: c.tokens,
          model: modelNote(c),
        };
        bar.update(value, payload);
      },
      log(m) {
        bar.stop();
        stream.write(m + "\n");
        bar.start(total, value, payload);
      },
      stop() {
        bar.stop();
      },
    };
  }
  let lastLine = 0;
  let lastN = 0;
  let lastModel = "";
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
      const model = modelNote(c);
      const now = Date.now();
      const tasksMoved = n !== lastN && (n === total || n - lastN >= every || now - lastLine >= 10_000);
      // A new retry or limit change shows even while no task finishes (at most every 2 s).
      const modelMoved = model !== lastModel && now - lastLine >= 2_000;
      if (tasksMoved || modelMoved) {
        lastN = n;
        lastModel = model;
        lastLine = Date.now();
        stream.write(
          `progress: ${n}/${total} tasks (${c.done} ok, ${c.failed} failed, ${c.dropped} dropped) | ${rate(n, startedAt).toFixed(2)}/s | ETA ${eta(n, total, startedAt)} | ${c.tokens} tokens${model}\n`,
        );
      }
    },
    log: (m) => stream.write(m + "\n"),
    stop() {},
  };
}
