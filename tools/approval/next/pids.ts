/**
 * `kill` whose process ids come from a lister (`kill -9 $(pgrep -f x)`, `pgrep -u pg | xargs kill -9`,
 * `for p in $(pidof x); do kill $p; done`, `ps aux | grep x | awk … | xargs kill`) read as the `pkill` it
 * equals, so the pkill rows judge it; an unfiltered `ps` listing kills everything.
 */
import type { SimpleCommand } from "./model.js";
import type { Invocation } from "./unwrap.js";
import { PID_LISTINGS as L } from "./rules/system.js";
import type { Word } from "./words.js";

const word = (text: string): Word => ({
  text: text.replace(/^['"]|['"]$/g, "").replace(/\[(\w)\]/g, "$1"),
  literal: true,
  glob: false,
});

/** kill's signal, spelled as pkill takes it (`-s KILL` → `-KILL`). */
function signal(args: Word[]): Word[] {
  const at = args.findIndex((w) => w.text === "-s" || w.text === "-n");
  if (at >= 0 && args[at + 1]) return [word(`-${args[at + 1]!.text}`)];
  return args.filter((w) => /^-(SIG)?[A-Z0-9]+$/i.test(w.text) && w.text !== "--").slice(0, 1);
}

/** The commands feeding xargs, first to last. */
function feeders(cmd: SimpleCommand): SimpleCommand[] {
  const chain: SimpleCommand[] = [];
  for (let c = cmd.pipedFrom; c && chain.length < 8; c = c.pipedFrom) chain.unshift(c);
  return chain;
}

const programOf = (c: SimpleCommand) => (c.argv[0]?.text ?? "").replace(/^.*\//, "");

/** The lister's words as pkill arguments, or "all" for an unfiltered process list. */
function listed(inv: Invocation): Word[] | "all" | undefined {
  for (const a of inv.args) {
    const m = L.substituted.exec(a.text);
    if (m)
      return m[2]!
        .trim()
        .split(/\s+/)
        .filter((w) => m[1] === "pgrep" || !w.startsWith("-"))
        .map(word);
  }
  if (!inv.via.includes("xargs")) return undefined;
  const [origin, ...filters] = feeders(inv.command);
  if (!origin) return undefined;
  const program = programOf(origin);
  if (program === "pgrep" || program === "pidof") return origin.argv.slice(1).map((w) => word(w.text));
  if (program !== "ps") return undefined;
  if (origin.argv.slice(1).some((w) => L.psSelects.test(w.text))) return undefined;
  const narrowing = filters.filter(
    (f) => L.narrowing.test(programOf(f)) || (programOf(f) === "awk" && L.awkPattern.test(f.argv[1]?.text ?? "")),
  );
  if (!narrowing.length) return "all";
  return narrowing.flatMap((f) =>
    f.argv
      .slice(1)
      .filter((w) => !w.text.startsWith("-"))
      .map((w) => word(w.text)),
  );
}

/** The pkill invocation a kill of listed pids equals, or "all", or undefined when its pids are given. */
export function killAsPkill(inv: Invocation): Invocation | "all" | undefined {
  if (inv.program !== "kill") return undefined;
  const source = listed(inv);
  if (!source || source === "all") return source;
  return { ...inv, program: "pkill", args: [...signal(inv.args), ...source], runtimeArgs: false };
}
