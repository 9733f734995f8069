/**
 * The rebuilt analyser's findings the current detector (../analyse.ts) lacks, added to its own while
 * the rebuild is not wired (issue 26): a globbed program word read as the programs it can name
 * (`/bin/r? -rf /etc`), interpreter code that computes what it calls (`f['rm'+'Sync'](…)`), memory
 * bombs below the old thresholds (`bytearray(60 * 1024**3)`, `head -c 30G /dev/zero | tail`) and
 * secrets staged in a file and sent on (`tar czf c.tgz ~/.ssh && curl -T c.tgz …`). Each was measured
 * on every corpus to add no false alarm.
 */
import { judgeCommand, type JudgeOptions } from "./analyse.js";
import { CLASSES } from "./classes.js";
import type { Finding } from "./judges.js";

const TAKEN = new Set<string>(["inline_code_unanalysable", "credential_exfiltration", "resource_exhaustion"]);

const taken = (f: Finding) => f.source === "glob" || (TAKEN.has(f.key) && !/stress test/.test(f.reason));

/**
 * Longer lines are left to the current detector alone (its own budget holds there): the rebuilt analyser
 * costs about 0.1 ms per simple command, so 10,000 of them on one line would take a second.
 */
const MAX_CHARS = 32 * 1024;

export function supplementaryFindings(command: string, opts?: JudgeOptions): { key: string; description: string }[] {
  if (command.length > MAX_CHARS) return [];
  let findings: Finding[];
  try {
    findings = judgeCommand(command, opts).findings;
  } catch {
    return [];
  }
  const keys = new Set(findings.filter(taken).map((f) => f.key));
  return [...keys].map((key) => ({ key, description: CLASSES[key as keyof typeof CLASSES] }));
}
