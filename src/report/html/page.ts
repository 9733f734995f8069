/**
 * The report page as one HTML text: the stylesheet and script inline (allowed by their hashes in a
 * Content-Security-Policy that forbids every other load), the data gzip-compressed and base64-encoded
 * in inert <script type="application/gzip+base64"> blocks, so nothing a task contains can close a tag.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { ReportModel, TaskDetail } from "./report_data.js";

const asset = (name: string) => readFileSync(new URL(`./client/${name}`, import.meta.url), "utf8");
let assets: { css: string; js: string } | undefined;
function clientAssets(): { css: string; js: string } {
  assets ??= { css: asset("page.css"), js: asset("page.js") };
  return assets;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

export function packText(text: string): string {
  return gzipSync(Buffer.from(text, "utf8"), { level: 6 }).toString("base64");
}

/** Tasks per compressed chunk of conversations: opening a task decodes only its chunk. */
export const DETAIL_CHUNK = 500;

/**
 * The conversations, in the order of the rows (the page finds a task by its row index): chunks of
 * DETAIL_CHUNK JSON lines, each gzip+base64, one chunk a line.
 */
function packDetails(details: TaskDetail[]): string {
  const chunks: string[] = [];
  for (let i = 0; i < details.length; i += DETAIL_CHUNK) {
    chunks.push(
      packText(
        details
          .slice(i, i + DETAIL_CHUNK)
          .map((d) => JSON.stringify(d))
          .join("\n"),
      ),
    );
  }
  return chunks.join("\n");
}

/** The three data blocks of the page: the model without conversations, and the conversations of each run. */
export function packModel(model: ReportModel): { main: string; details: string; base: string } {
  const { details, baseline, ...rest } = model;
  const main = {
    ...rest,
    detail_chunk: DETAIL_CHUNK,
    baseline: baseline ? { run: baseline.run, comparison: baseline.comparison, rows: baseline.rows } : undefined,
  };
  return {
    main: packText(JSON.stringify(main)),
    details: packDetails(details),
    base: baseline ? packDetails(baseline.details) : "",
  };
}

export interface PageOptions {
  title: string;
  /** `view`: the page fetches its data from the server it came from and polls for changes. */
  live?: boolean;
  data?: { main: string; details: string; base: string };
}

export function renderPage(opts: PageOptions): string {
  const { css, js } = clientAssets();
  const csp = pageCsp(opts.live === true);
  const block = (name: string, b64: string) =>
    `<script type="application/gzip+base64" id="hb-${name}">${b64}</script>\n`;
  return [
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">\n`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n<meta name="referrer" content="no-referrer">\n',
    `<title>${escapeHtml(opts.title)}</title>\n<style>${css}</style>\n</head>\n`,
    `<body data-live="${opts.live ? "1" : "0"}">\n<header class="hb" id="hdr"><h1>${escapeHtml(opts.title)}</h1></header>\n<main id="view"><p class="sub">Loading…</p></main>\n`,
    opts.data
      ? block("main", opts.data.main) + block("details", opts.data.details) + block("base", opts.data.base)
      : "",
    `<script>${js}</script>\n</body>\n</html>\n`,
  ].join("");
}

/** The self-contained report of a run. */
export function reportHtml(model: ReportModel): string {
  return renderPage({ title: `hermes-batch report · ${model.run.name}`, data: packModel(model) });
}

/** The CSP a server should also send as a header (the same as the page's meta tag). */
export function pageCsp(live: boolean): string {
  const { css, js } = clientAssets();
  return `default-src 'none'; script-src ${sha256(js)}; style-src ${sha256(css)}; img-src data:; connect-src ${live ? "'self'" : "'none'"}; base-uri 'none'; form-action 'none'`;
}
