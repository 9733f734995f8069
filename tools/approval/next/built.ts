/** Programs built on the line: which source files a compiler reads and where it puts the program. */
import { COMPILERS } from "./rules/wrappers.js";
import type { Invocation } from "./unwrap.js";
import { literalWord, type Word } from "./words.js";

/** Key under which a built program's sources are kept with the line's written files. */
export const BUILT = "\u0000built:";

/**
 * The sources and output of a compiler run (`cc w.c -o w`, `go build -o x x.go`, `rustc m.rs`); a source
 * `-` is the compiler's standard input (`clang -x c -o p - <<< 'int main(){…}'`), kept as `stdin`.
 */
export function compiledFrom(inv: Invocation): { sources: Word[]; output: Word; stdin?: string } | undefined {
  const spec = COMPILERS[inv.program];
  if (!spec || (spec.verb && inv.args[0]?.text !== spec.verb)) return undefined;
  const args = spec.verb ? inv.args.slice(1) : inv.args;
  let output: Word | undefined;
  const sources: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === spec.output) output = args[++i];
    else if (t.startsWith(`${spec.output}=`) || (spec.output === "-o" && /^-o./.test(t)))
      output = { ...args[i]!, text: t.replace(/^-o=?|^-femit-bin=/, "") };
    else if (!t.startsWith("-") && spec.sources.test(t)) sources.push(args[i]!);
  }
  const stdin = inv.args.some((w) => w.text === "-") && inv.command.stdin?.literal ? inv.command.stdin.text : undefined;
  if (!sources.length && stdin === undefined) return undefined;
  const stem = sources[0]?.text.replace(/^.*\//, "").replace(/\.[^.]+$/, "") ?? "a.out";
  return { sources, output: output ?? literalWord(spec.fallback === "stem" ? stem : spec.fallback), stdin };
}
