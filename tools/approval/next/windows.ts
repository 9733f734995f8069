/**
 * Windows shells: the command text `cmd /c …` and `powershell -Command …` run, rewritten so the bash
 * model can read it (drive paths as `/c/…`, `\` as `/`, names lower-cased: cmdlets and switches are
 * case-insensitive). The programs it names are rows of rules/windows.ts.
 */
import { CMD_SWITCHES, LISTED_REMOVAL, LIST_VALUED, WINDOWS_REWRITES, WINDOWS_SHELLS } from "./rules/windows.js";
import type { Word } from "./words.js";

function listedRemoval(_: string, _list: string, listArgs: string): string {
  const words = listArgs.trim().split(/\s+/);
  const at = words.findIndex(
    (w, i) => /^-(path|literalpath)$/.test(w) || (!w.startsWith("-") && !LIST_VALUED.test(words[i - 1] ?? "")),
  );
  const dir = (/^-/.test(words[at] ?? "") ? words[at + 1] : words[at]) ?? ".";
  return `remove-item -recurse ${dir.replace(/\/$/, "")}/*`;
}

/** `C:\Users\x` → `/c/users/x`; `$HOME\.aws`, `$env:USERPROFILE` → `~/.aws`; `$x` → `x` (not bash's). */
export function windowsText(text: string, switches?: RegExp): string {
  const bashLike = WINDOWS_REWRITES.reduce((t, [re, to]) => t.replace(re, to), text).toLowerCase();
  // cmd's switches `/s`, `/q` (and the shell's longer ones) read as options, not as paths under /.
  const options = bashLike.replace(CMD_SWITCHES, "$1-$2").replace(switches ?? /$^/, "$1-$2");
  return options.replace(LISTED_REMOVAL, listedRemoval);
}

/** The text a Windows shell runs: the words after its command switch, or from the first cmdlet on. */
export function windowsShellText(program: string, args: Word[]): Word | undefined {
  const spec = WINDOWS_SHELLS.get(program.toLowerCase());
  if (!spec) return undefined;
  const cmdlet = (w: Word, i: number) =>
    spec.bare.test(w.text) && !spec.valued.includes(args[i - 1]?.text.toLowerCase() ?? "");
  const at = args.findIndex((w) => spec.command.includes(w.text.toLowerCase())) + 1 || args.findIndex(cmdlet);
  const rest = at >= 0 ? args.slice(at) : [];
  if (!rest.length) return undefined;
  return {
    text: windowsText(rest.map((w) => w.text).join(" "), spec.switches),
    // PowerShell's own `$x` are not bash's; a command substitution or backquote still is.
    literal: rest.every((w) => w.literal || !/\$\(|`/.test(w.text)),
    glob: false,
  };
}
