/**
 * Interpreters' inline code (`python -c`, `node -e`, `perl -e`, `ruby -e`, scripts written earlier): the
 * calls that delete, write or run a shell, with their string arguments; shell text is handed back to
 * the line judge. Code that hides its calls (computed member names, decoded strings) is unanalysable.
 */
import type { ClassKey } from "./classes.js";

export interface InlineFinding {
  key?: ClassKey;
  /** Paths a call deletes or writes, judged by the caller against the working directory. */
  deletes: string[];
  writes: string[];
  /** Shell text the code runs. */
  shell: string[];
  reason: string;
}

const STR = String.raw`(?:'([^'\\]*)'|"([^"\\]*)"|\`([^\`\\$]*)\`)`;
const DELETE_CALLS = new RegExp(
  String.raw`\b(?:shutil\.rmtree|os\.remove|os\.unlink|os\.rmdir|os\.removedirs|Path\(\s*${STR}\s*\)\.(?:unlink|rmdir)|rmSync|rmdirSync|unlinkSync|rm|rmdir|unlink|remove_dir_all|remove_file|FileUtils\.rm_rf|FileUtils\.rm_r|File\.delete|rmtree)\s*\(\s*(?:${STR})?`,
  "g",
);
const WRITE_CALLS = new RegExp(
  String.raw`\b(?:open\s*\(\s*${STR}\s*,\s*['"][wa]|writeFileSync\s*\(\s*${STR}|appendFileSync\s*\(\s*${STR}|write_text|File\.write\s*\(\s*${STR})`,
  "g",
);
const SHELL_CALLS = new RegExp(
  String.raw`\b(?:os\.system|os\.popen|subprocess\.\w+|execSync|exec|spawnSync|spawn|execFileSync|system|qx|Popen|check_output|check_call|call|run)\s*\(\s*(?:\[\s*)?${STR}`,
  "g",
);
const COMPUTED_MEMBER =
  /\[\s*(['"`][^'"`]*['"`]\s*\+|[a-zA-Z_$][\w$]*\s*\+\s*['"`]|atob|Buffer\.from|String\.fromCharCode|\w+\s*\(\s*\)\s*\])|getattr\s*\(\s*\w+\s*,\s*(?!['"][a-z_]+['"]\s*\))|__import__\s*\(\s*(?!['"])|\b(eval|exec)\s*\(\s*(?:base64|codecs|bytes\.fromhex|zlib|atob|Buffer|['"][^'"]*['"]\s*\+|\w+\s*\()/;
const NAMED_DANGEROUS_MEMBER =
  /\[\s*['"`](rmSync|rmdirSync|unlinkSync|execSync|exec|spawn|spawnSync|writeFileSync|rm|rmtree|system|remove|unlink)['"`]\s*\]/;
const GIB = 1024 ** 3;

const first = (m: RegExpExecArray) => m.slice(1).find((g) => g !== undefined);

/** Sizes written as `N * 1024**3`, `N << 30`, `10**10`, `N * 2**30`, `NGB`: the largest one, in bytes. */
export function largestAllocation(code: string): number {
  let max = 0;
  const alloc =
    /(bytearray|bytes|\bb?['"][^'"]{0,4}['"]\s*\*|Buffer\.alloc(?:Unsafe)?|new\s+(?:Array|ArrayBuffer|Uint8Array|Float64Array)|np\.(?:zeros|ones|empty)|malloc|\[0\]\s*\*|range)\s*\(?\s*([\d\s*()<+.x_e]+)/g;
  for (const m of code.matchAll(alloc)) {
    const expr = m[2]!.replace(/_/g, "").replace(/\s+/g, "");
    const value = evaluateSize(expr);
    if (value > max) max = value;
  }
  return max;
}

function evaluateSize(expr: string): number {
  const shift = /^\(?(\d+)<<(\d+)\)?/.exec(expr);
  if (shift) return Number(shift[1]) * 2 ** Number(shift[2]);
  let total = 1;
  let any = false;
  for (const factor of expr.replace(/[()]/g, "").split(/(?<!\*)\*(?!\*)/)) {
    const pow = /^(\d+(?:\.\d+)?)(?:\*\*(\d+))?$/.exec(factor) ?? /^(\d+(?:\.\d+)?)e(\d+)$/.exec(factor);
    if (!pow) break;
    total *= factor.includes("e") ? Number(factor) : Number(pow[1]) ** Number(pow[2] ?? 1);
    any = true;
  }
  return any ? total : 0;
}

/** What one piece of inline code does. */
export function analyseInlineCode(code: string): InlineFinding {
  const out: InlineFinding = { deletes: [], writes: [], shell: [], reason: "" };
  for (const m of code.matchAll(DELETE_CALLS)) {
    const path = first(m);
    if (path !== undefined) out.deletes.push(path);
    else out.deletes.push("\u0000computed");
  }
  for (const m of code.matchAll(WRITE_CALLS)) {
    const path = first(m);
    if (path !== undefined) out.writes.push(path);
  }
  for (const m of code.matchAll(SHELL_CALLS)) {
    const text = first(m);
    if (text !== undefined) out.shell.push(text);
  }
  if (
    /\b(exec|eval)\s*\(.*\b(urlopen|requests\.get|fetch|urllib|http\.get|Net::HTTP|open-uri|URI\.open)/.test(code) ||
    /\bfetch\([^)]*\)[\s\S]*\.then\(\s*eval\s*\)/.test(code)
  ) {
    out.key = "remote_code_exec";
    out.reason = "runs code it downloads";
  } else if (
    /\bsocket\b|TCPSocket|fsockopen|net\.Socket|net\.connect/.test(code) &&
    /\b(pty\.spawn|dup2|\/bin\/(ba)?sh|exec\s*\(|subprocess|spawn\(|popen)/.test(code)
  ) {
    out.key = "remote_access";
    out.reason = "connects a shell to a socket";
  } else if (COMPUTED_MEMBER.test(code) || NAMED_DANGEROUS_MEMBER.test(code)) {
    out.key = "inline_code_unanalysable";
    out.reason = "the code computes the name of what it calls";
  } else if (largestAllocation(code) >= 8 * GIB) {
    out.key = "resource_exhaustion";
    out.reason = "allocates gigabytes of memory";
  } else if (
    /\bwhile\s*(True|1|\(\s*(true|1)\s*\))\s*:?\s*\{?[^}]*(os\.fork|fork\(\)|\.append\(|\.push\()/.test(code)
  ) {
    out.key = code.includes("fork") ? "fork_bomb" : "resource_exhaustion";
    out.reason = "forks or allocates without end";
  }
  return out;
}
