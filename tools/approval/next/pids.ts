/**
 * `kill` whose process ids come from a lister (`kill -9 $(pgrep -f x)`, `pgrep -u pg | xargs kill -9`,
 * `for p in $(pidof x); do kill $p; done`, `ps aux | grep x | awk … | xargs kill`) read as the `pkill` it
 * equals, so the pkill rows judge it; an unfiltered `ps` listing kills everything.
 */
import { upstream } from "./model.js";
import { basename, programOf, type Invocation } from "./unwrap.js";
import { PID_LISTINGS as L } from "./rules/system.js";
import { literalWord, type Word } from "./words.js";

/** A lister's word as pkill reads it: quotes dropped, `[n]ginx` (the grep-excluding trick) as `nginx`. */
const word = (text: string) => literalWord(text.replace(/^['"]|['"]$/g, "").replace(/\[(\w)\]/g, "$1"));

/** kill's signal, spelled as pkill takes it (`-s KILL` → `-KILL`). */
function signal(args: Word[]): Word[] {
  const at = args.findIndex((w) => w.text === "-s" || w.text === "-n");
  if (at >= 0 && args[at + 1]) return [word(`-${args[at + 1]!.text}`)];
  return args.filter((w) => /^-(SIG)?[A-Z0-9]+$/i.test(w.text) && w.text !== "--").slice(0, 1);
}

/** The lister's words as pkill arguments, or "all" for an unfiltered process list. */
function listed(inv: Invocation): Word[] | "all" | undefined {
  for (const a of inv.args) {
    const [, lister, words] = L.substituted.exec(a.text) ?? [];
    // pgrep's options select processes (`pgrep -u pg`): they stay; pidof's do not
    const texts = words?.trim().split(/\s+/);
    if (texts) return texts.flatMap((w) => (lister === "pgrep" || !w.startsWith("-") ? [word(w)] : []));
  }
  if (!inv.via.includes("xargs")) return undefined;
  // the (nearest 8) commands feeding xargs, first to last
  const [origin, ...filters] = upstream(inv.command).slice(0, 8).reverse();
  if (!origin) return undefined;
  const program = programOf(origin);
  if (program === "pgrep" || program === "pidof") return origin.argv.slice(1).map((w) => word(w.text));
  if (program !== "ps" || origin.argv.slice(1).some((w) => L.psSelects.test(w.text))) return undefined;
  const narrowing = filters.filter(
    (f) => L.narrowing.test(programOf(f)) || (programOf(f) === "awk" && L.awkPattern.test(f.argv[1]?.text ?? "")),
  );
  if (!narrowing.length) return "all";
  return narrowing.flatMap((f) => f.argv.slice(1).flatMap((w) => (w.text.startsWith("-") ? [] : [word(w.text)])));
}

/** The pkill invocation a kill of listed pids equals, or "all", or undefined when its pids are given. */
export function killAsPkill(inv: Invocation): Invocation | "all" | undefined {
  if (inv.program !== "kill") return undefined;
  const source = listed(inv);
  if (!source || source === "all") return source;
  return { ...inv, program: "pkill", args: [...signal(inv.args), ...source], runtimeArgs: false };
}
