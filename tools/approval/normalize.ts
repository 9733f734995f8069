/** Normalisation before detection: what a terminal would hide is removed, look-alikes folded (NFKC). */
// ECMA-48: CSI (7- and 8-bit), OSC/DCS/PM/APC strings, and two-character escapes.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b[\]P^_X][\s\S]*?(?:\x07|\x1b\\|$)|\x1b[ -/]*[0-~]/g;
// Invisible or direction-changing characters that a terminal hides but the shell passes through.
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// C0/C1 control characters other than tab and newline.
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]/g;

/**
 * The command as the detector and the verdict cache see it: ANSI escapes, NUL and other control
 * characters and invisible characters removed, line endings unified, NFKC applied (fullwidth
 * letters become ASCII), surrounding blanks trimmed. Case is kept (`-R` and `-r` differ).
 */
export function normalizeCommand(cmd: string): string {
  return String(cmd)
    .replace(ANSI, "")
    .replace(/\r\n?|[\u2028\u2029]/g, "\n")
    .replace(INVISIBLE, "")
    .normalize("NFKC")
    .replace(ANSI, "")
    .replace(CONTROLS, "")
    .trim();
}
