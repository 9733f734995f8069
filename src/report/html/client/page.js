// The report page: decodes the embedded (or, in `view`, fetched) data and renders the overview, the
// virtualised task table, a task's conversation and the baseline diff. Every text from the run goes
// into the page through text nodes and attributes, never as HTML.
"use strict";
(() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const ROW_H = 30;
  const LIVE = document.body.dataset.live === "1";
  const state = {
    model: null,
    sources: null,
    rowIndex: new Map(),
    baseIndex: new Map(),
    filters: { q: "", outcome: "", passed: "", toolset: "", group: "" },
    sort: { col: "", dir: 1 },
    version: "",
    scrollTop: 0,
  };

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, String(v));
    }
    append(el, children);
    return el;
  }
  function append(el, children) {
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
    for (const c of children.flat(Infinity))
      if (c !== undefined && c !== null) el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    return el;
  }

  const fmtInt = (n) => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));
  const pct = (x, digits = 1) => (x === null || x === undefined ? "–" : `${(x * 100).toFixed(digits)} %`);
  function dur(ms) {
    if (ms === null || ms === undefined) return "–";
    if (ms < 1000) return `${Math.round(ms)} ms`;
    const sec = ms / 1000;
    if (sec < 120) return `${sec.toFixed(1)} s`;
    const m = Math.floor(sec / 60);
    if (m < 120) return `${m} min ${Math.round(sec % 60)} s`;
    return `${Math.floor(m / 60)} h ${m % 60} min`;
  }
  function size(n) {
    return n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} kB` : `${(n / 1048576).toFixed(1)} MB`;
  }
  const passBadge = (p) =>
    p === true
      ? h("span", { class: "badge pass" }, "passed")
      : p === false
        ? h("span", { class: "badge fail" }, "failed")
        : h("span", { class: "badge" }, "unscored");
  const outcomeBadge = (o) =>
    h(
      "span",
      {
        class: `badge ${o === "completed" ? "pass" : o === "max_turns" || o === "partial" || o === "time_limit" || o === "resource_limit" || o === "dropped" ? "warn" : "fail"}`,
      },
      o,
    );
  const taskHref = (id, ep, side) =>
    `#task=${encodeURIComponent(id)}${ep ? `&epoch=${ep}` : ""}${side ? "&side=1" : ""}`;

  async function gunzipBase64(b64) {
    const bin = atob(b64.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  /** A data block's text and, in `view`, the version of the data it belongs to. */
  async function rawBlock(name) {
    if (LIVE) {
      const res = await fetch(`data/${name}`, { cache: "no-store" });
      if (!res.ok) throw new Error(`data/${name}: HTTP ${res.status}`);
      return { text: await res.text(), version: decodeURIComponent(res.headers.get("x-data-version") || "") };
    }
    const el = document.getElementById(`hb-${name}`);
    return { text: el ? el.textContent || "" : "", version: "" };
  }

  async function load() {
    const main = await rawBlock("main");
    const model = JSON.parse(await gunzipBase64(main.text));
    state.version = main.version;
    state.model = model;
    state.rowIndex = new Map(model.rows.map((r, i) => [r.k, i]));
    state.baseIndex = new Map((model.baseline ? model.baseline.rows : []).map((r, i) => [r.k, i]));
    state.sources = { details: { chunks: null, decoded: new Map() }, base: { chunks: null, decoded: new Map() } };
  }
  // Conversations come in compressed chunks, decoded when a task of the chunk is first opened.
  async function detail(which, key, retried) {
    const name = which === "base" ? "base" : "details";
    const i = (which === "base" ? state.baseIndex : state.rowIndex).get(key);
    if (i === undefined) return null;
    const src = state.sources[name];
    if (!src.chunks) {
      const block = await rawBlock(name);
      // The run moved on since the rows were loaded: reload, so row indices match the conversations.
      if (block.version !== state.version && !retried) {
        await load();
        return detail(which, key, true);
      }
      src.chunks = block.text.split("\n");
    }
    const c = Math.floor(i / state.model.detail_chunk);
    let lines = src.decoded.get(c);
    if (!lines) {
      lines = (await gunzipBase64(src.chunks[c])).split("\n");
      src.decoded.set(c, lines);
    }
    return JSON.parse(lines[i % state.model.detail_chunk]);
  }

  // ---- header and navigation
  function renderHeader(view) {
    const m = state.model;
    const r = m.run;
    const hdr = document.getElementById("hdr");
    hdr.replaceChildren();
    const meta = h("div", { class: "meta" });
    const item = (label, value) =>
      value !== null &&
      value !== undefined &&
      value !== "" &&
      append(meta, [h("span", null, `${label} `, h("b", null, value))]);
    item("model", r.model);
    item("dataset", r.dataset);
    item("started", r.started_at ? r.started_at.replace("T", " ").replace(/\.\d+Z$/, " UTC") : null);
    item("took", r.duration_s !== null ? dur(r.duration_s * 1000) : null);
    item("tasks", fmtInt(r.totals.samples));
    item("tokens", tokensText(r.totals));
    item("tool calls", fmtInt(r.totals.tool_calls));
    if (LIVE && r.progress) {
      const p = r.progress;
      append(meta, [
        h(
          "span",
          { class: "live", id: "live" },
          `${p.finished ? "finished" : "running"} · ${fmtInt(p.done + p.failed + p.dropped)}${p.total !== null ? ` / ${fmtInt(p.total)}` : ""} tasks · updated ${new Date().toLocaleTimeString("en-GB")}`,
        ),
      ]);
    }
    const tabs = h("nav", { class: "tabs" });
    const tab = (name, label) =>
      append(tabs, [h("a", { href: `#${name}`, class: view === name ? "on" : "", id: `tab-${name}` }, label)]);
    tab("overview", "Overview");
    tab("tasks", `Tasks (${fmtInt(m.rows.length)})`);
    if (m.baseline) tab("baseline", `Baseline: ${m.baseline.comparison.newly_failing.length} newly failing`);
    append(hdr, [h("h1", null, `hermes-batch · ${r.name}`), meta, tabs]);
  }

  // ---- overview
  function card(title, ...children) {
    return h("section", { class: "card" }, h("h2", null, title), children);
  }
  function kv(pairs) {
    const dl = h("dl", { class: "kv" });
    for (const [k, v] of pairs) append(dl, [h("dt", null, k), h("dd", null, v)]);
    return dl;
  }
  function scoresCard() {
    const sc = state.model.scores;
    const unscoredWhy = Object.entries(sc.unscored_by || {})
      .map(([k, n]) => `${n} ${k}`)
      .join(", ");
    if (!sc.scored) {
      return card(
        "Scores",
        h("div", { class: "big" }, "no scorer"),
        h(
          "p",
          { class: "sub", id: "no-scorer" },
          `None of the ${fmtInt(sc.unscored)} tasks was scored${unscoredWhy ? ` (${unscoredWhy})` : ""}. Add expected, verify or rubric to the dataset rows to score them.`,
        ),
      );
    }
    // Every k up to the epochs, with how many tasks it is measured over (tasks with k scored epochs).
    const over = sc.pass_at_k_tasks || {};
    const ks = [...new Set([...Object.keys(sc.pass_at_k || {}), ...Object.keys(over)])].sort((a, b) => a - b);
    return card(
      "Scores",
      h("div", { class: "big", id: "pass-rate" }, pct(sc.pass_rate)),
      h(
        "div",
        { class: "sub" },
        sc.ci95 ? `95 % interval ${pct(sc.ci95[0])} – ${pct(sc.ci95[1])} · ` : "",
        `${fmtInt(sc.passed)} of ${fmtInt(sc.scored)} scored passed · `,
        // The rate is the mean of the tasks' rates: said so when tasks have unequal numbers of scored epochs.
        sc.scored && Math.abs(sc.pass_rate - sc.passed / sc.scored) > 1e-9
          ? "rate: the mean of the tasks' rates · "
          : "",
        h("b", null, `${fmtInt(sc.unscored)} unscored`),
        unscoredWhy ? ` (${unscoredWhy})` : "",
      ),
      ks.length > 1 || sc.epochs > 1
        ? h(
            "table",
            { class: "plain" },
            h(
              "tr",
              null,
              h("th", null, "k"),
              h("th", { class: "n" }, "pass@k"),
              h("th", { class: "n" }, "pass^k"),
              h("th", { class: "n" }, "tasks"),
            ),
            ks.map((k) =>
              h(
                "tr",
                null,
                h("td", null, k),
                h("td", { class: "n" }, sc.pass_at_k[k] === undefined ? "n/a" : pct(sc.pass_at_k[k])),
                h("td", { class: "n" }, sc.pass_hat_k[k] === undefined ? "n/a" : pct(sc.pass_hat_k[k])),
                h("td", { class: "n" }, over[k] === undefined ? "" : fmtInt(over[k])),
              ),
            ),
          )
        : null,
    );
  }
  function groupsCard() {
    const groups = state.model.scores.groups;
    if (!groups || !state.model.scores.scored) return null;
    const table = h(
      "table",
      { class: "plain" },
      h(
        "tr",
        null,
        h("th", null, "group"),
        h("th", { class: "n" }, "scored"),
        h("th", { class: "n" }, "pass rate"),
        h("th", null, "95 % interval"),
        h("th", { class: "n" }, "unscored"),
      ),
    );
    for (const [key, values] of Object.entries(groups)) {
      for (const [value, g] of Object.entries(values)) {
        append(table, [
          h(
            "tr",
            null,
            h("td", null, `${key} = ${value}`),
            h("td", { class: "n" }, fmtInt(g.scored)),
            h("td", { class: "n" }, pct(g.pass_rate)),
            h("td", null, g.ci95 ? `${pct(g.ci95[0])} – ${pct(g.ci95[1])}` : "–"),
            h("td", { class: "n" }, fmtInt(g.unscored)),
          ),
        ]);
      }
    }
    return card("Scores by group", table);
  }

  const COLORS = ["#2457c5", "#c62828", "#1a7f37", "#b26a00"];
  function hbars(items, series, colors) {
    if (!items.length) return h("p", { class: "empty" }, "none");
    const shown = items.slice(0, 14);
    const labelW = 165;
    const W = 420;
    const barH = 14;
    const rowH = series.length * barH + 8;
    const max = Math.max(1, ...shown.flatMap((it) => it.slice(1)));
    const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${shown.length * rowH + 4}`, role: "img" });
    shown.forEach((it, i) => {
      const y = i * rowH + 4;
      const label = String(it[0]);
      append(svg, [
        s(
          "text",
          { x: labelW - 6, y: y + (series.length * barH) / 2 + 4, "text-anchor": "end" },
          label.length > 26 ? `${label.slice(0, 25)}…` : label,
          s("title", null, label),
        ),
      ]);
      series.forEach((name, j) => {
        const v = it[j + 1];
        const w = ((W - labelW - 60) * v) / max;
        append(svg, [
          s(
            "rect",
            { x: labelW, y: y + j * barH, width: Math.max(v ? 1 : 0, w), height: barH - 2, fill: colors[j], rx: 2 },
            s("title", null, `${label}: ${v} ${name}`),
          ),
          s("text", { x: labelW + w + 4, y: y + j * barH + barH - 4, class: "muted" }, fmtInt(v)),
        ]);
      });
    });
    const legend = h(
      "div",
      { class: "legend" },
      series.map((name, j) => h("span", null, h("span", { class: `sw sw${j}` }), name)),
    );
    legend.querySelectorAll(".sw").forEach((el, j) => (el.style.background = colors[j]));
    return h(
      "div",
      null,
      svg,
      series.length > 1 ? legend : null,
      items.length > shown.length ? h("p", { class: "sub" }, `and ${items.length - shown.length} more`) : null,
    );
  }
  function histogram(values, fmt) {
    if (!values.length) return h("p", { class: "empty" }, "no tasks");
    let min = Infinity;
    let max = -Infinity;
    for (const v of values) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const integer = values.every((v) => Number.isInteger(v));
    let bins = Math.min(24, Math.max(1, integer ? max - min + 1 : 24));
    const width = max > min ? (max - min) / bins : 1;
    if (max === min) bins = 1;
    const counts = new Array(bins).fill(0);
    for (const v of values) counts[Math.min(bins - 1, Math.floor((v - min) / width))]++;
    const W = 420;
    const H = 130;
    const top = Math.max(...counts);
    const bw = (W - 40) / bins;
    const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H + 34}`, role: "img" });
    counts.forEach((c, i) => {
      const bh = (H * c) / top;
      const lo = min + i * width;
      append(svg, [
        s(
          "rect",
          { x: 30 + i * bw + 1, y: H - bh + 4, width: Math.max(1, bw - 2), height: bh, fill: COLORS[0], rx: 1 },
          s("title", null, `${fmt(lo)} – ${fmt(lo + width)}: ${c} task(s)`),
        ),
      ]);
    });
    append(svg, [
      s("line", { x1: 30, y1: H + 4, x2: W - 10, y2: H + 4, stroke: "#9aa3b2" }),
      s("text", { x: 30, y: H + 20 }, fmt(min)),
      s("text", { x: W - 10, y: H + 20, "text-anchor": "end" }, fmt(max)),
      s("text", { x: 26, y: 14, "text-anchor": "end", class: "muted" }, fmtInt(top)),
      s("text", { x: W / 2, y: H + 32, "text-anchor": "middle", class: "muted" }, `${fmtInt(values.length)} tasks`),
    ]);
    return svg;
  }
  function renderOverview(root) {
    const m = state.model;
    const outcomes = Object.entries(m.run.outcomes).filter(([, n]) => n > 0);
    const c = m.charts;
    root.append(
      h(
        "div",
        { class: "cards" },
        card(
          "Outcomes",
          h("div", { class: "big" }, fmtInt(m.run.totals.samples), h("span", { class: "sub" }, " tasks")),
          h(
            "table",
            { class: "plain", id: "outcomes" },
            outcomes.map(([o, n]) => h("tr", null, h("td", null, outcomeBadge(o)), h("td", { class: "n" }, fmtInt(n)))),
          ),
        ),
        scoresCard(),
        card(
          "Run",
          kv([
            ["folder", m.run.dir],
            ["finished", m.run.completed_at || "–"],
            ["tokens", tokensText(m.run.totals)],
            ["tool calls / errors", `${fmtInt(m.run.totals.tool_calls)} / ${fmtInt(m.run.totals.tool_errors)}`],
            ["approval decisions", fmtInt(m.run.totals.approvals)],
            ...m.run.config,
          ]),
        ),
      ),
      h("div", { class: "cards" }, groupsCard()),
      h(
        "div",
        { class: "charts" },
        card("Tool calls and errors per tool", hbars(c.tools, ["calls", "errors"], [COLORS[0], COLORS[1]])),
        card(
          "Turns per task",
          histogram(c.turns, (v) => String(Math.round(v))),
        ),
        card(
          "Tokens per task",
          histogram(c.tokens, (v) => fmtInt(v)),
        ),
        card("Duration per task", histogram(c.durations_ms, dur)),
        card("Approval decisions by class", hbars(c.approvals, ["approved", "denied"], [COLORS[2], COLORS[1]])),
        card("Failures by outcome", hbars(c.failures, ["tasks"], [COLORS[3]])),
      ),
    );
  }

  // ---- task table
  const COLUMNS = [
    ["id", "task", (r) => r.id],
    ["ep", "epoch", (r) => r.ep],
    ["o", "outcome", (r) => r.o],
    ["p", "passed", (r) => (r.p === true ? 2 : r.p === false ? 1 : 0)],
    ["s", "score", (r) => (r.s === null ? -1 : r.s)],
    ["t", "turns", (r) => r.t],
    ["tok", "tokens", (r) => r.tok],
    ["ms", "duration", (r) => r.ms],
    ["ts", "toolsets", (r) => r.ts],
    ["g", "group", (r) => r.g],
  ];
  function filteredRows() {
    const f = state.filters;
    const q = f.q.trim().toLowerCase();
    let rows = state.model.rows.filter(
      (r) =>
        (!f.outcome || r.o === f.outcome) &&
        (!f.passed || (f.passed === "passed" ? r.p === true : f.passed === "failed" ? r.p === false : r.p === null)) &&
        (!f.toolset || r.ts.split("+").includes(f.toolset)) &&
        (!f.group || r.g === f.group) &&
        (!q || r.id.toLowerCase().includes(q) || r.q.toLowerCase().includes(q) || r.r.toLowerCase().includes(q)),
    );
    const col = COLUMNS.find((c) => c[0] === state.sort.col);
    if (col) {
      const key = col[2];
      const dir = state.sort.dir;
      rows = rows.slice().sort((a, b) => {
        const x = key(a);
        const y = key(b);
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
    }
    return rows;
  }
  function select(id, label, values, current, onChange) {
    const el = h(
      "select",
      { id, "aria-label": label, onchange: (e) => onChange(e.target.value) },
      h("option", { value: "" }, `${label}: all`),
      values.map((v) => h("option", { value: v }, v)),
    );
    el.value = current;
    return el;
  }
  function distinct(values) {
    return [...new Set(values)].filter((v) => v !== "").sort();
  }
  function renderTasks(root) {
    const m = state.model;
    const f = state.filters;
    const count = h("span", { class: "sub", id: "count" });
    const head = h("div", { class: "trow head" });
    const viewport = h("div", { class: "viewport", id: "viewport" });
    const spacer = h("div");
    viewport.append(spacer);
    let rows = [];
    let drawn = "";
    const draw = (force) => {
      const top = viewport.scrollTop;
      const first = Math.max(0, Math.floor(top / ROW_H) - 10);
      const last = Math.min(rows.length, Math.ceil((top + viewport.clientHeight) / ROW_H) + 10);
      const sig = `${first}:${last}`;
      if (!force && sig === drawn) return;
      drawn = sig;
      const frag = document.createDocumentFragment();
      for (let i = first; i < last; i++) {
        const r = rows[i];
        const el = h(
          "div",
          { class: "trow body", "data-key": r.k, role: "row" },
          h("a", { href: taskHref(r.id, r.ep), title: r.q }, r.id),
          h("span", { class: "n" }, r.ep),
          h("span", null, outcomeBadge(r.o)),
          h("span", { title: r.r }, passBadge(r.p)),
          h("span", { class: "n" }, r.s === null ? "–" : r.s.toFixed(2)),
          h("span", { class: "n" }, r.t),
          h("span", { class: "n" }, fmtInt(r.tok)),
          h("span", { class: "n" }, dur(r.ms)),
          h("span", { title: r.ts }, r.ts),
          h("span", { title: r.g }, r.g),
        );
        el.style.top = `${i * ROW_H}px`;
        el.addEventListener("click", (e) => {
          if (e.target.tagName !== "A") location.hash = taskHref(r.id, r.ep);
        });
        frag.append(el);
      }
      spacer.replaceChildren(frag);
    };
    const refresh = () => {
      rows = filteredRows();
      spacer.style.height = `${rows.length * ROW_H}px`;
      count.textContent = `${fmtInt(rows.length)} of ${fmtInt(m.rows.length)} tasks`;
      head.querySelectorAll("span").forEach((el) => el.classList.toggle("sorted", el.dataset.col === state.sort.col));
      draw(true);
    };
    for (const [col, label] of COLUMNS) {
      const el = h("span", { "data-col": col, class: ["ep", "s", "t", "tok", "ms"].includes(col) ? "n" : "" }, label);
      el.addEventListener("click", () => {
        state.sort = {
          col,
          dir:
            state.sort.col === col
              ? -state.sort.dir
              : col === "id" || col === "o" || col === "ts" || col === "g"
                ? 1
                : -1,
        };
        refresh();
      });
      head.append(el);
    }
    let timer = 0;
    const search = h("input", {
      id: "search",
      type: "search",
      placeholder: "search id, prompt or reason",
      "aria-label": "search",
      value: f.q,
    });
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        f.q = search.value;
        viewport.scrollTop = 0;
        refresh();
      }, 120);
    });
    const set = (key) => (v) => {
      f[key] = v;
      viewport.scrollTop = 0;
      refresh();
    };
    const toolsets = distinct(m.rows.flatMap((r) => r.ts.split("+")));
    const filters = h(
      "div",
      { class: "filters" },
      search,
      select("f-outcome", "outcome", distinct(m.rows.map((r) => r.o)), f.outcome, set("outcome")),
      select("f-passed", "passed", ["passed", "failed", "unscored"], f.passed, set("passed")),
      select("f-toolset", "toolset", toolsets, f.toolset, set("toolset")),
      m.group_label ? select("f-group", m.group_label, distinct(m.rows.map((r) => r.g)), f.group, set("group")) : null,
      count,
    );
    root.append(filters, h("div", { class: "tbl" }, head, viewport));
    viewport.style.height = `${Math.max(240, window.innerHeight - viewport.getBoundingClientRect().top - 30)}px`;
    viewport.addEventListener("scroll", () => {
      state.scrollTop = viewport.scrollTop;
      requestAnimationFrame(() => draw(false));
    });
    refresh();
    viewport.scrollTop = state.scrollTop;
    draw(true);
  }

  // ---- task view
  function prettyJson(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  }
  function folded(summary, body, open) {
    return h("details", { open: open || null }, h("summary", null, summary), body);
  }
  function approvalBox(a) {
    return h(
      "div",
      { class: `approval ${a.decision === "approve" ? "approve" : "deny"}` },
      h("b", null, a.decision === "approve" ? "approved" : "denied"),
      ` by ${a.by || "?"} · class `,
      h("b", null, a.pattern || "–"),
      a.description ? ` (${a.description})` : "",
      a.cached ? " · cached" : "",
      a.error ? " · decider failed" : "",
      h("div", null, h("code", null, a.command || "")),
      a.reason ? h("div", { class: "sub" }, `reason: ${a.reason}`) : null,
    );
  }
  function commandOf(call) {
    try {
      const args = JSON.parse(call.function.arguments);
      return typeof args.command === "string" ? args.command : typeof args.path === "string" ? args.path : null;
    } catch {
      return null;
    }
  }
  function renderConversation(d) {
    const results = new Map();
    for (const msg of d.messages) if (msg && msg.role === "tool") results.set(msg.tool_call_id, msg);
    const pending = (d.approvals || []).slice();
    const takeApprovals = (call) => {
      const cmd = commandOf(call);
      if (cmd === null) return [];
      const hits = [];
      for (let i = 0; i < pending.length; i++) {
        if (pending[i] && pending[i].command && (pending[i].command === cmd || cmd.includes(pending[i].command))) {
          hits.push(pending[i]);
          pending.splice(i, 1);
          i--;
        }
      }
      return hits;
    };
    const turns = h("div", { class: "turns" });
    let turn = 0;
    for (const msg of d.messages) {
      if (!msg || typeof msg !== "object") continue;
      if (msg.role === "system")
        turns.append(
          h(
            "div",
            { class: "msg system" },
            folded(
              `system prompt (${size(String(msg.content || "").length)})`,
              h("div", { class: "text" }, String(msg.content || "")),
            ),
          ),
        );
      else if (msg.role === "user")
        turns.append(
          h(
            "div",
            { class: "msg user" },
            h("div", { class: "who" }, "user"),
            h("div", { class: "text" }, String(msg.content || "")),
          ),
        );
      else if (msg.role === "assistant") {
        turn++;
        const box = h(
          "div",
          { class: "msg assistant", "data-turn": turn },
          h("div", { class: "who" }, `turn ${turn} · assistant`),
        );
        if (msg.reasoning)
          box.append(folded(`reasoning (${size(msg.reasoning.length)})`, h("div", { class: "text" }, msg.reasoning)));
        if (msg.content) box.append(h("div", { class: "text" }, msg.content));
        for (const call of msg.tool_calls || []) {
          const fn = call.function || {};
          const res = results.get(call.id);
          const resText = res ? String(res.content) : null;
          box.append(
            h(
              "div",
              { class: "call" },
              h("div", { class: "name" }, `→ ${fn.name || "?"}`),
              h("pre", { class: "args" }, prettyJson(String(fn.arguments || ""))),
              takeApprovals(call).map(approvalBox),
              resText === null
                ? h("div", { class: "sub" }, "no result")
                : folded(`result (${size(resText.length)})`, h("pre", null, prettyJson(resText))),
            ),
          );
        }
        turns.append(box);
      }
    }
    if (pending.length)
      turns.append(
        h("div", { class: "msg" }, h("div", { class: "who" }, "other approval decisions"), pending.map(approvalBox)),
      );
    return turns;
  }
  // The run's tokens as the console and statistics.json give them: the total (agent + approver + judge), then by whom.
  function tokensText(t) {
    const b = t.token_breakdown;
    return b
      ? `${fmtInt(t.tokens)} (agent ${fmtInt(b.agent)}, approver ${fmtInt(b.approver)}, judge ${fmtInt(b.judge)})`
      : fmtInt(t.tokens);
  }
  function usageText(u) {
    return u
      ? `${fmtInt(u.prompt_tokens)} in · ${fmtInt(u.completion_tokens)} out · ${fmtInt(u.total_tokens)} total`
      : "–";
  }
  function renderTaskBody(d, row) {
    const box = h("div", { class: "task" });
    const facts = [
      ["outcome", outcomeBadge(row ? row.o : d.outcome)],
      ["passed", passBadge(row ? row.p : null)],
      ["epoch", String(d.epoch)],
      ["turns", String(row ? row.t : (d.api_calls ?? "–"))],
      ["duration", dur(d.duration_ms)],
      ["usage", usageText(d.usage)],
    ];
    if (d.approval_usage && d.approval_usage.total_tokens) facts.push(["approval usage", usageText(d.approval_usage)]);
    if (d.judge_usage && d.judge_usage.total_tokens) facts.push(["judge usage", usageText(d.judge_usage)]);
    facts.push(["toolsets", d.toolsets_used.join(", ") || "–"]);
    if (d.dropped) facts.push(["dropped", d.dropped]);
    box.append(
      h(
        "div",
        { class: "card facts" },
        facts.map(([k, v]) => h("span", null, h("span", { class: "k" }, k), v)),
      ),
    );
    if (d.error) box.append(h("div", { class: "card" }, h("h2", null, "Error"), h("pre", { class: "err" }, d.error)));
    const sc = d.score;
    const scoreCard = h("div", { class: "card", id: "score" }, h("h2", null, "Score"));
    if (!sc)
      scoreCard.append(
        h(
          "p",
          { class: "empty" },
          d.source === "trajectory"
            ? "no scorer for this task"
            : d.source === "failed"
              ? `unscored: infrastructure failure (${d.outcome})`
              : `unscored: dropped (${d.dropped || "filtered"})`,
        ),
      );
    else {
      scoreCard.append(
        h(
          "div",
          null,
          passBadge(sc.passed),
          sc.value !== null && sc.value !== undefined ? ` value ${Number(sc.value).toFixed(2)}` : "",
        ),
      );
      for (const sr of sc.scorers || []) {
        scoreCard.append(
          h(
            "div",
            { class: "call" },
            h("span", { class: "name" }, sr.name),
            " ",
            passBadge(sr.passed),
            sr.value !== null && sr.value !== undefined ? ` ${Number(sr.value).toFixed(2)}` : "",
            sr.reason ? h("div", { class: "text judge-reason" }, sr.reason) : null,
            sr.details && Object.keys(sr.details).length
              ? folded("details", h("pre", null, JSON.stringify(sr.details, null, 2)))
              : null,
          ),
        );
      }
    }
    if (d.verify) {
      const v = d.verify;
      scoreCard.append(
        h(
          "div",
          { class: "call", id: "verify" },
          h("span", { class: "name" }, "verify "),
          passBadge(v.passed),
          ` exit ${v.exit_code}${v.timed_out ? " · timed out" : ""}`,
          h("pre", null, v.command),
          v.output ? folded(`output (${size(String(v.output).length)})`, h("pre", null, v.output), !v.passed) : null,
        ),
      );
    }
    box.append(scoreCard);
    box.append(
      h("h3", null, "Conversation"),
      d.messages.length ? renderConversation(d) : h("p", { class: "empty" }, "no conversation recorded"),
    );
    if (d.final_response)
      box.append(
        h("div", { class: "card" }, h("h2", null, "Final answer"), h("div", { class: "text" }, d.final_response)),
      );
    if (d.metadata && Object.keys(d.metadata).length)
      box.append(folded("metadata", h("pre", null, JSON.stringify(d.metadata, null, 2))));
    return box;
  }
  async function renderTask(root, params) {
    const id = params.get("task");
    const ep = Number(params.get("epoch") || 0);
    const key = `${id}#${ep}`;
    const i = state.rowIndex.get(key);
    const row = i === undefined ? null : state.model.rows[i];
    const side = params.get("side") === "1" && state.model.baseline;
    const title = h(
      "div",
      { class: "filters" },
      h("a", { href: side ? "#baseline" : "#tasks" }, "← back"),
      h("h2", { class: "title", id: "task-title" }, id, ep ? ` · epoch ${ep}` : ""),
    );
    if (state.model.baseline && state.baseIndex.has(key) && row)
      title.append(
        h("a", { href: taskHref(id, ep, !side) }, side ? "this run only" : "side by side with the baseline"),
      );
    root.append(title);
    if (!row && !(side && state.baseIndex.has(key))) {
      root.append(h("p", { class: "empty" }, `No task ${id} (epoch ${ep}) in this run.`));
      return;
    }
    const cur = row ? await detail("cur", key) : null;
    if (!side) {
      root.append(renderTaskBody(cur, row));
      return;
    }
    const bi = state.baseIndex.get(key);
    const base = bi === undefined ? null : await detail("base", key);
    const col = (label, d, r) =>
      h("div", null, h("h3", null, label), d ? renderTaskBody(d, r) : h("p", { class: "empty" }, "not in this run"));
    root.append(
      h(
        "div",
        { class: "side" },
        col(
          `baseline · ${state.model.baseline.run.name}`,
          base,
          bi === undefined ? null : state.model.baseline.rows[bi],
        ),
        col(`current · ${state.model.run.name}`, cur, row),
      ),
    );
  }

  // ---- baseline
  function renderBaseline(root) {
    const b = state.model.baseline;
    if (!b) {
      root.append(h("p", { class: "empty" }, "No baseline: pass --baseline RUN_DIR to compare."));
      return;
    }
    const c = b.comparison;
    const list = (title, id, changes, cls) =>
      card(
        `${title} (${changes.length})`,
        changes.length
          ? h(
              "div",
              { class: "changes", id },
              changes
                .slice(0, 2000)
                .map((t) =>
                  h(
                    "a",
                    { href: taskHref(t.task_id, t.epoch, true) },
                    h("span", { class: `badge ${cls}` }, cls === "fail" ? "newly failing" : "newly passing"),
                    ` ${t.task_id} · ${t.baseline} → ${t.current}`,
                    t.reason ? h("span", { class: "sub" }, ` — ${t.reason.slice(0, 200)}`) : "",
                  ),
                ),
            )
          : h("p", { class: "empty" }, "none"),
      );
    const only = (title, keys) =>
      keys.length
        ? card(
            `${title} (${keys.length})`,
            h(
              "div",
              { class: "sub" },
              keys
                .slice(0, 500)
                .map((k) => k.replace(/#0$/, ""))
                .join(", "),
            ),
          )
        : null;
    root.append(
      h(
        "div",
        { class: "stack" },
        list("Newly failing", "newly-failing", c.newly_failing, "fail"),
        list("Newly passing", "newly-passing", c.newly_passing, "pass"),
      ),
    );
    const sign = (x, f) => (x === null ? "–" : `${x > 0 ? "+" : ""}${f(x)}`);
    root.append(
      h(
        "div",
        { class: "cards", id: "deltas" },
        card(
          "Pass rate change",
          h(
            "div",
            { class: "big" },
            c.delta_pp === null ? "–" : `${c.delta_pp > 0 ? "+" : ""}${c.delta_pp.toFixed(1)} pp`,
          ),
          h(
            "div",
            { class: "sub" },
            `${pct(c.paired_baseline_rate)} → ${pct(c.paired_current_rate)} over ${fmtInt(c.paired)} tasks scored in both`,
            c.delta_ci95_pp
              ? ` · 95 % interval ${c.delta_ci95_pp[0].toFixed(1)} to ${c.delta_ci95_pp[1].toFixed(1)} pp`
              : "",
          ),
          h(
            "div",
            { class: "sub" },
            c.p_value === null
              ? ""
              : `${c.test === "mcnemar_exact" ? "exact McNemar" : `sign-flip permutation over tasks${c.test_on_common_epochs ? " (each task's first epochs, as many as both runs scored)" : ""}`} p = ${c.p_value.toPrecision(3)} two-sided${c.significant_drop ? " (significant drop)" : ""}`,
          ),
          h("div", { class: "sub", id: "gate-note" }, c.gate_note),
          // The verdict as compare prints it (its exit 1): which gate failed, and why.
          c.verdict === "regression"
            ? h("div", { class: "sub", id: "gate-regressions" }, h("b", null, "REGRESSION: "), c.regressions.join("; "))
            : null,
        ),
        card(
          "Runs",
          kv([
            ["baseline", `${b.run.name} (${b.run.model})`],
            ["current", `${state.model.run.name} (${state.model.run.model})`],
            ["in common", fmtInt(c.common)],
            ["unscored or missing tasks", fmtInt(c.unscored_tasks)],
            ["only in baseline", fmtInt(c.only_in_baseline.length)],
            ["only in current", fmtInt(c.only_in_current.length)],
            ["tokens per task", sign(c.mean_tokens_delta, fmtInt)],
            ["duration per task", sign(c.mean_duration_ms_delta, dur)],
            ["cost", c.cost_usd_delta === null ? "–" : sign(c.cost_usd_delta, (x) => `$${x.toFixed(4)}`)],
          ]),
        ),
      ),
      h(
        "div",
        { class: "stack" },
        only("Only in the baseline", c.only_in_baseline),
        only("Only in the current run", c.only_in_current),
      ),
    );
  }

  // ---- routing
  let renderSeq = 0;
  async function route() {
    const seq = ++renderSeq;
    const hash = location.hash.replace(/^#/, "");
    const params = new URLSearchParams(hash.includes("=") ? hash : "");
    const view = params.has("task") ? "task" : hash === "tasks" || hash === "baseline" ? hash : "overview";
    renderHeader(view === "task" ? "tasks" : view);
    const root = document.getElementById("view");
    const fresh = h("div");
    if (view === "task") await renderTask(fresh, params);
    else if (view === "tasks") {
      root.replaceChildren(fresh);
      renderTasks(fresh);
      return;
    } else if (view === "baseline") renderBaseline(fresh);
    else renderOverview(fresh);
    if (seq === renderSeq) {
      root.replaceChildren(fresh);
      if (view === "task") window.scrollTo(0, 0);
    }
  }

  async function poll() {
    try {
      const res = await fetch("data/version", { cache: "no-store" });
      const version = await res.text();
      if (version !== state.version) {
        await load();
        const onTask = location.hash.includes("task=");
        if (onTask) renderHeader("tasks");
        else await route();
      }
    } catch (err) {
      const live = document.getElementById("live");
      if (live) live.textContent = `disconnected (${err.message})`;
    }
    setTimeout(poll, 2000);
  }

  async function start() {
    try {
      await load();
      window.addEventListener("hashchange", () => route());
      await route();
      document.documentElement.dataset.ready = "1";
      if (LIVE) setTimeout(poll, 2000);
    } catch (err) {
      document
        .getElementById("view")
        .replaceChildren(
          h("pre", { class: "err" }, `The report could not be read: ${err && err.message ? err.message : err}`),
        );
      throw err;
    }
  }
  start();
})();
