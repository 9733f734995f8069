/**
 * Policy `interactive`: a person answers once / session / always / deny, one prompt at a time;
 * no answer within the timeout (default 60 s) is a deny.
 */
import { createInterface } from "node:readline/promises";
import { appendToAllowlist } from "../allowlist.js";
import {
  DEFAULT_PROMPT_TIMEOUT_MS,
  DO_NOT_RETRY,
  type ApprovalPolicyFactory,
  type PromptChoice,
  type PromptFn,
  type PromptRequest,
} from "../types.js";

function parseChoice(answer: string): PromptChoice {
  const a = answer.trim().toLowerCase();
  if (a === "o" || a === "once") return "once";
  if (a === "s" || a === "session") return "session";
  if (a === "a" || a === "always") return "always";
  return "deny";
}

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
    return parseChoice(answer);
  } finally {
    rl.close();
  }
};

class PromptTimeout extends Error {}

const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);

export const interactivePolicy: ApprovalPolicyFactory = (opts, state) => {
  const promptTimeoutMs = opts.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS;
  const persist = opts.persistAllowlist ?? ((key: string) => appendToAllowlist(key));
  let promptQueue: Promise<unknown> = Promise.resolve();

  async function ask(req: Omit<PromptRequest, "signal" | "timeoutMs">): Promise<PromptChoice> {
    const prompt = opts.prompt ?? ttyPrompt;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new PromptTimeout());
      }, promptTimeoutMs);
    });
    try {
      return await Promise.race([prompt({ ...req, timeoutMs: promptTimeoutMs, signal: controller.signal }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    consultsAllowlist: true,
    async decide({ command, keys, description, cwd, backend }) {
      const turn = promptQueue.then(() => ask({ command, patternKey: keys[0]!, description, cwd, backend }));
      promptQueue = turn.catch(() => undefined);
      let choice: PromptChoice;
      try {
        choice = await turn;
      } catch (err) {
        const reason =
          err instanceof PromptTimeout
            ? `no answer within ${duration(promptTimeoutMs)}`
            : `prompt failed: ${err instanceof Error ? err.message : String(err)}`;
        return {
          decision: "deny",
          by: "user",
          reason,
          message: `BLOCKED: ${reason}, so this potentially dangerous command (${description}) was denied. ${DO_NOT_RETRY}`,
        };
      }
      if (choice === "once") return { decision: "approve", by: "user", reason: "approved once" };
      if (choice === "session") {
        for (const k of keys) state.session.add(k);
        return { decision: "approve", by: "user", reason: "approved for this task's session" };
      }
      if (choice === "always") {
        const failures: string[] = [];
        for (const k of keys) {
          state.session.add(k);
          state.allow.add(k);
          try {
            await persist(k);
          } catch (err) {
            failures.push(`${k}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
        const reason = failures.length
          ? `approved always (could not save to command_allowlist: ${failures.join("; ")})`
          : "approved always (saved to command_allowlist)";
        return { decision: "approve", by: "user", reason };
      }
      return {
        decision: "deny",
        by: "user",
        reason: "denied by the user",
        message: `BLOCKED: the user denied this potentially dangerous command (${description}). ${DO_NOT_RETRY}`,
      };
    },
  };
};
