/**
 * `hermes-batch view DIR [--port P]`: the report page of a run served on 127.0.0.1, refreshed from the run
 * folder; on a folder of runs, an index of its runs with each run's page under /run/NAME/.
 */
import { existsSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { UserError } from "../core/errors.js";
import { RUN_FILES } from "../store/checkpoint.js";
import { buildReportModel } from "../report/html/report_data.js";
import { packModel, pageCsp, renderPage } from "../report/html/page.js";
import { isRunFolder, listRuns, runFolderNames, runIndexCsp, runIndexHtml } from "../report/html/run_index.js";
import type { CompareOptions } from "../report/compare.js";
import { checkRunFiles, parseCommandArgs, parseIntFlag } from "./args.js";
import { GATE_OPTIONS, gateOptions } from "./gate_flags.js";
import { runFilePaths } from "./report.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch view RUN_DIR [--port P] [--baseline RUN_DIR [gate flags]]
       hermes-batch view RUNS_DIR [--port P]

Serves the report page of a run on http://127.0.0.1:P/ (this machine only) and refreshes it from the run
folder every two seconds, so a run in progress shows its progress and finished tasks as they land.
Given a folder of runs (e.g. \`view runs\`), it serves an index of them instead: name, start date, model,
pass rate, results and state, newest first, each linking to that run's page (/run/NAME/). A folder that
is neither a run nor holds one is an error (exit 2).
Ctrl-C stops it.

Options
  --port P             the port (default 8787; 0 picks a free one)
  --baseline RUN_DIR   compare with an earlier run, as in \`report --baseline\` (one run only)
  --max-drop P, --significant-only, --max-unscored N|P%, --allow-different-dataset
                       with --baseline: the gate CI's \`compare\` applies (see compare --help), so the page's
                       verdict is the one \`compare\` gives with the same flags; without them, compare's default
                       gate. The start line names the gate.
`;

const options = {
  ...GATE_OPTIONS,
  port: { type: "string" },
  baseline: { type: "string" },
} as const;

const WATCHED = [
  RUN_FILES.trajectories,
  RUN_FILES.failed,
  RUN_FILES.dropped,
  RUN_FILES.statistics,
  RUN_FILES.checkpoint,
  RUN_FILES.config,
];

/** Changes whenever a result file of either run changes: size and modification time of each. */
function folderVersion(dirs: string[]): string {
  const parts: string[] = [];
  for (const dir of dirs) {
    for (const name of WATCHED) {
      try {
        const st = statSync(join(dir, name));
        parts.push(`${name}:${st.size}:${st.mtimeMs}`);
      } catch {
        parts.push(`${name}:-`);
      }
    }
  }
  return parts.join("|");
}

type Packed = { main: string; details: string; base: string };

const HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
} as const;

/** Answers a request under a run's page: `path` is relative to it ("/", "/data/main", …). */
type RunHandler = (path: string, res: ServerResponse) => Promise<void>;

/**
 * Serves the page and its data. The data is rebuilt when the run folder changed, one build at a time: a
 * large run still being written does not pile builds up, and the version the page sees always belongs to
 * the data it then fetches.
 */
function runHandler(runDir: string, baselineDir?: string, gate: CompareOptions = {}): RunHandler {
  const dirs = baselineDir ? [runDir, baselineDir] : [runDir];
  let built: { version: string; packed: Packed } | undefined;
  let building: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    building ??= (async () => {
      try {
        const version = folderVersion(dirs);
        if (built?.version === version) return;
        built = { version, packed: packModel(await buildReportModel(runDir, baselineDir, gate)) };
      } finally {
        building = undefined;
      }
    })();
    return building;
  };
  /** The latest built data; the first request waits for the first build, later ones never wait. */
  const data = async (): Promise<{ version: string; packed: Packed }> => {
    const pending = refresh();
    if (!built) await pending;
    else pending.catch(() => undefined); // a failed rebuild (a file replaced mid-read) is retried by the next poll
    return built!;
  };
  const page = renderPage({ title: `hermes-batch view · ${runDir}`, live: true });
  const headers = HEADERS;

  return async (path, res) => {
    if (path === "/" || path === "/index.html") {
      res
        .writeHead(200, {
          ...headers,
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": pageCsp(true),
        })
        .end(page);
      return;
    }
    const blob = /^\/data\/(version|main|details|base)$/.exec(path)?.[1];
    if (!blob) {
      res.writeHead(404, headers).end("not found\n");
      return;
    }
    try {
      const current = await data();
      const body = blob === "version" ? current.version : current.packed[blob as keyof Packed];
      // The page checks that conversations it fetches later belong to the rows it shows.
      res
        .writeHead(200, {
          ...headers,
          "content-type": "text/plain; charset=utf-8",
          "x-data-version": encodeURIComponent(current.version),
        })
        .end(body);
    } catch (err) {
      res.writeHead(500, headers).end(`cannot read the run: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  };
}

/** Local names only and GET/HEAD only; then `route` answers with the request's path. */
function localServer(route: (path: string, res: ServerResponse) => Promise<void>) {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      // Only this machine's own names: a page elsewhere cannot reach the server through DNS rebinding.
      const host = (req.headers.host ?? "").replace(/:\d+$/, "");
      if (host !== "127.0.0.1" && host !== "localhost") {
        res.writeHead(403, HEADERS).end("forbidden host\n");
        return;
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { ...HEADERS, allow: "GET, HEAD" }).end();
        return;
      }
      await route(new URL(req.url ?? "/", "http://127.0.0.1").pathname, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, HEADERS).end(`${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
}

/**
 * The live page of one run (and its baseline) at `/`. `gate`: compare's gate options (src/commands/gate_flags.ts),
 * so the page's verdict is the one `compare` gives with the same flags.
 */
export function createViewServer(runDir: string, baselineDir?: string, gate: CompareOptions = {}) {
  return localServer(runHandler(runDir, baselineDir, gate));
}

/** The gate flags as given, in compare's order (`--max-drop 5 --max-unscored 0`), or compare's default gate. */
function gateText(values: Partial<Record<keyof typeof GATE_OPTIONS, string | boolean>>): string {
  const given = (Object.keys(GATE_OPTIONS) as (keyof typeof GATE_OPTIONS)[])
    .filter((f) => values[f] !== undefined && values[f] !== false)
    .map((f) => (typeof values[f] === "string" ? `--${f} ${values[f]}` : `--${f}`));
  return given.length ? given.join(" ") : "compare's default (no gate flags)";
}

/**
 * A folder of runs: its index at `/`, read again at every request (runs started later appear), and each run's
 * live page at `/run/NAME/`. Only a run folder listed in `dir` is served: a name is never a path.
 */
export function createRunsIndexServer(dir: string) {
  const runs = new Map<string, RunHandler>();
  const title = `hermes-batch view · ${dir}`;
  return localServer(async (path, res) => {
    if (path === "/" || path === "/index.html") {
      const html = runIndexHtml({
        title,
        dir,
        runs: listRuns(dir),
        href: (name) => `run/${encodeURIComponent(name)}/`,
      });
      res
        .writeHead(200, {
          ...HEADERS,
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": runIndexCsp(),
        })
        .end(html);
      return;
    }
    const m = /^\/run\/([^/]+)(\/.*)?$/.exec(path);
    let name: string | undefined;
    try {
      name = m ? decodeURIComponent(m[1]!) : undefined;
    } catch {
      name = undefined;
    }
    // A name is one folder inside `dir`, never a path: no slash, no hidden or dot folder; and it holds a run.
    if (
      m === null ||
      name === undefined ||
      /[/\0]/.test(name) ||
      name.startsWith(".") ||
      !isRunFolder(join(dir, name))
    ) {
      res.writeHead(404, { ...HEADERS, "content-type": "text/plain; charset=utf-8" }).end(`no such run in ${dir}\n`);
      return;
    }
    // The page fetches data/… relative to itself: its address must end in a slash.
    if (m[2] === undefined) {
      res.writeHead(301, { ...HEADERS, location: `/run/${encodeURIComponent(name)}/` }).end();
      return;
    }
    let handler = runs.get(name);
    if (!handler) runs.set(name, (handler = runHandler(join(dir, name))));
    await handler(m[2], res);
  });
}

export const command: Command = {
  summary: "serve the report of a run (also one in progress), or an index of a folder of runs, on 127.0.0.1",
  help,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 1)
      throw new UserError("view needs one run folder (RUN_DIR) or a folder of runs (see --help)");
    const runDir = positionals[0]!;
    for (const dir of [runDir, values.baseline]) {
      if (dir !== undefined && (!existsSync(dir) || !statSync(dir).isDirectory()))
        throw new UserError(`${dir}: no such run folder`);
    }
    // A run folder is served as such; otherwise a folder holding run folders gets their index.
    const single = isRunFolder(runDir);
    const count = single ? 0 : runFolderNames(runDir).length;
    if (!single && count === 0) {
      throw new UserError(
        `${runDir}: neither a run folder nor a folder of runs (no ${RUN_FILES.config}, ${RUN_FILES.trajectories} or ${RUN_FILES.checkpoint} in it or in a folder inside it)`,
      );
    }
    if (values.baseline !== undefined && !single)
      throw new UserError(`--baseline compares one run: ${runDir} is a folder of runs`);
    if (values.baseline !== undefined && !isRunFolder(values.baseline))
      throw new UserError(`--baseline ${values.baseline}: not a run folder`);
    // The gate flags are compare's, parsed by the same code: the page's verdict is the CI gate's.
    const gate = gateOptions(values);
    const gateFlag = Object.keys(GATE_OPTIONS).find((f) => values[f as keyof typeof GATE_OPTIONS] !== undefined);
    if (gateFlag && values.baseline === undefined) throw new UserError(`--${gateFlag} needs --baseline RUN_DIR`);
    if (single) checkRunFiles(runFilePaths(runDir, values.baseline));
    const port = parseIntFlag(values.port, "--port", 0) ?? 8787;
    if (port > 65535) throw new UserError(`--port must be at most 65535, got ${port}`);
    const server = single ? createViewServer(runDir, values.baseline, gate) : createRunsIndexServer(runDir);
    await new Promise<void>((resolveListen, reject) => {
      server.once("error", (err: NodeJS.ErrnoException) =>
        reject(err.code === "EADDRINUSE" ? new UserError(`--port ${port}: already in use`) : err),
      );
      server.listen(port, "127.0.0.1", () => resolveListen());
    });
    const address = server.address();
    const actual = typeof address === "object" && address ? address.port : port;
    const what = single
      ? values.baseline !== undefined
        ? `against ${values.baseline}, gate: ${gateText(values)}; `
        : ""
      : `${count} run(s) in ${runDir}, each at /run/NAME/; `;
    process.stdout.write(`view: http://127.0.0.1:${actual}/ (${what}Ctrl-C to stop)\n`);
    await new Promise<void>((resolveStop) => {
      const stop = () => {
        server.close(() => resolveStop());
        server.closeAllConnections();
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    return 0;
  },
};
