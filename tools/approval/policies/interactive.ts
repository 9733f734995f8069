/**
 * Policy `interactive`: a person answers once / session / always / deny, one prompt at a time;
 * no answer within the timeout (default 60 s) is a deny.
 */
import { createInterface } from "node:readline/promises";
import { errorMessage } from "../../../src/core/errors.js";
import { appendToAllowlist } from "../allowlist.js";
import {
  blocked,
  type ApprovalPolicyFactory,
  type PolicyDecision,
  type PromptChoice,
  type PromptFn,
  type PromptRequest,
} from "../types.js";

export const DEFAULT_PROMPT_TIMEOUT_MS = 60_000;

/** The default interactive prompt, on the terminal. */
export const ttyPrompt: PromptFn = async (req) => {
  if (!process.stdin.isTTY) throw new Error("no terminal to ask (stdin is not a TTY)");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`\n⚠️  Potentially dangerous command (${req.description}):\n    ${req.command}\n`);
    const answer = await rl.question(
      `Allow? [o]nce | [s]ession | [a]lways | [d]eny (${Math.round(req.timeoutMs / 1000)} s → deny): `,
      { signal: req.signal },
    );
    // `o`/`once`, `s`/`session`, `a`/`always`; anything else denies.
    const a = answer.trim().toLowerCase();
    return (["once", "session", "always"] as const).find((c) => a === c || a === c[0]) ?? "deny";
  } finally {
    rl.close();
  }
};

class PromptTimeout extends Error {}

const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);

/** Asks with a deadline: past it the prompt's signal is aborted and the answer is a PromptTimeout saying so. */
async function askWithin(prompt: PromptFn, req: Omit<PromptRequest, "signal">): Promise<PromptChoice> {
  const controller = new AbortController();
  const { signal } = controller;
  const timedOut = new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(new PromptTimeout(`no answer within ${duration(req.timeoutMs)}`)));
  });
  const timer = setTimeout(() => controller.abort(), req.timeoutMs);
  return Promise.race([prompt({ ...req, signal }), timedOut]).finally(() => clearTimeout(timer));
}

export const interactivePolicy: ApprovalPolicyFactory = (opts, state) => {
  const timeoutMs = opts.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS;
  const persist = opts.persistAllowlist ?? ((key: string) => appendToAllowlist(key));
  let promptQueue: Promise<unknown> = Promise.resolve();
  const approve = (reason: string): PolicyDecision => ({ decision: "approve", by: "user", reason });

  /** "always": approved for the session and saved to command_allowlist; a failure to save is said, not fatal. */
  async function always(keys: string[]): Promise<PolicyDecision> {
    const failures: string[] = [];
    for (const k of keys) {
      state.session.add(k);
      state.allow.add(k);
      await persist(k).catch((err) => failures.push(`${k}: ${errorMessage(err)}`));
    }
    if (!failures.length) return approve("approved always (saved to command_allowlist)");
    return approve(`approved always (could not save to command_allowlist: ${failures.join("; ")})`);
  }

  return {
    consultsAllowlist: true,
    async decide({ command, matches, description, cwd, backend }) {
      const keys = matches.map((m) => m.key);
      const what = `this potentially dangerous command (${description})`;
      const req = { command, patternKey: keys[0]!, description, cwd, backend, timeoutMs };
      const turn = promptQueue.then(() => askWithin(opts.prompt ?? ttyPrompt, req));
      promptQueue = turn.catch(() => undefined);
      let choice: PromptChoice;
      try {
        choice = await turn;
      } catch (err) {
        const why = err instanceof PromptTimeout ? err.message : `prompt failed: ${errorMessage(err)}`;
        return blocked("user", why, `${why}, so ${what} was denied`);
      }
      if (choice === "once") return approve("approved once");
      if (choice === "always") return always(keys);
      if (choice === "deny") return blocked("user", "denied by the user", `the user denied ${what}`);
      for (const k of keys) state.session.add(k);
      return approve("approved for this task's session");
    },
  };
};
