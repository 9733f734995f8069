/**
 * Kept turns → branches. Turns are chained into one flat sequence while each prompt starts with the
 * previous prompt plus completion (the prefix property); where it does not (a template that drops earlier
 * reasoning, a summarised history), a new branch starts. One branch is the flat case (prime-rl), one per
 * turn is SkyRL's step-wise case, anything between is verifiers v1's branches. The loss mask is 1 only on
 * sampled completion tokens; logprobs are 0 where the mask is 0.
 */
import type { RlBranch, RlTurn } from "../../core/rl_record.js";

function startsWith(seq: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > seq.length) return false;
  for (let i = 0; i < prefix.length; i++) if (seq[i] !== prefix[i]) return false;
  return true;
}

function pushAll(into: number[], from: readonly number[], start = 0): void {
  for (let i = start; i < from.length; i++) into.push(from[i]!);
}

function pushRepeated<T>(into: T[], value: T, n: number): void {
  for (let i = 0; i < n; i++) into.push(value);
}

type FullTurn = RlTurn & { prompt_token_ids: number[]; completion_token_ids: number[]; logprobs: number[] };

/** Every turn must have ids and as many logprobs as completion ids (see `tokenProblems`); else no branches. */
export function buildBranches(turns: readonly RlTurn[]): RlBranch[] {
  if (
    !turns.every(
      (t): t is FullTurn =>
        t.prompt_token_ids !== null &&
        t.completion_token_ids !== null &&
        t.logprobs !== null &&
        t.logprobs.length === t.completion_token_ids.length,
    )
  )
    return [];
  const branches: RlBranch[] = [];
  let current: RlBranch | undefined;
  for (const [i, t] of (turns as readonly FullTurn[]).entries()) {
    if (current && startsWith(t.prompt_token_ids, current.token_ids)) {
      const added = t.prompt_token_ids.length - current.token_ids.length;
      pushAll(current.token_ids, t.prompt_token_ids, current.token_ids.length);
      pushRepeated(current.loss_mask, 0, added);
      pushRepeated(current.logprobs, 0, added);
      current.turns.push(i);
    } else {
      current = {
        turns: [i],
        token_ids: [...t.prompt_token_ids],
        loss_mask: [],
        logprobs: [],
        prompt_length: t.prompt_token_ids.length,
      };
      pushRepeated(current.loss_mask, 0, t.prompt_token_ids.length);
      pushRepeated(current.logprobs, 0, t.prompt_token_ids.length);
      branches.push(current);
    }
    pushAll(current.token_ids, t.completion_token_ids);
    pushRepeated<0 | 1>(current.loss_mask, 1, t.completion_token_ids.length);
    pushAll(current.logprobs, t.logprobs);
  }
  return branches;
}

/** The usage an endpoint reported for one call, to check its ids against. */
export interface ReportedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * What is wrong with the token data of the kept turns: ids whose count differs from the reported usage,
 * logprobs whose count differs from the completion ids, and a prompt that does not even start with the
 * first turn's prompt (a later prompt drops earlier turns, it never rewrites the task's own beginning).
 */
export function tokenProblems(turns: readonly RlTurn[], usage: readonly (ReportedUsage | undefined)[]): string[] {
  const problems: string[] = [];
  const first = turns[0]?.prompt_token_ids;
  for (const [i, t] of turns.entries()) {
    const u = usage[i];
    if (t.prompt_token_ids && u && u.prompt_tokens !== t.prompt_token_ids.length) {
      problems.push(`turn ${i}: ${t.prompt_token_ids.length} prompt ids, usage says ${u.prompt_tokens}`);
    }
    if (t.completion_token_ids && u && u.completion_tokens !== t.completion_token_ids.length) {
      problems.push(`turn ${i}: ${t.completion_token_ids.length} completion ids, usage says ${u.completion_tokens}`);
    }
    if (t.completion_token_ids && t.logprobs && t.logprobs.length !== t.completion_token_ids.length) {
      problems.push(`turn ${i}: ${t.logprobs.length} logprobs for ${t.completion_token_ids.length} completion ids`);
    }
    if (i > 0 && first && t.prompt_token_ids && !startsWith(t.prompt_token_ids, first)) {
      problems.push(`turn ${i}: prompt does not start with the first turn's prompt`);
    }
  }
  return problems;
}

/**
 * What makes a line's arrays disagree with each other (a hand-edited or torn line, another writer), or undefined:
 * each branch's token_ids, loss_mask and logprobs the same length, its prompt_length within it, its turns indices
 * of `turns`; each turn as many logprobs as completion ids, unless the line's `problems` say otherwise. Exported as they are, such arrays would shift a
 * trainer's mask and logprobs against the tokens.
 */
export function rlLineInconsistency(line: {
  turns: readonly RlTurn[];
  branches: readonly RlBranch[];
  problems: readonly string[];
}): string | undefined {
  // A line whose turns' token data is bad says so in `problems` (and has no branches): its turns are as received.
  if (!line.problems.length)
    for (const [i, t] of line.turns.entries()) {
      // Branches are built only when every turn has its ids (buildBranches): the trainer formats read them all.
      if (line.branches.length && (!t.prompt_token_ids || !t.completion_token_ids || !t.logprobs))
        return `turns.${i}: no token ids, though the line has branches`;
      if (t.completion_token_ids && t.logprobs && t.logprobs.length !== t.completion_token_ids.length)
        return `turns.${i}: ${t.logprobs.length} logprobs for ${t.completion_token_ids.length} completion ids`;
    }
  for (const [i, b] of line.branches.entries()) {
    const n = b.token_ids.length;
    if (b.loss_mask.length !== n) return `branches.${i}: ${b.loss_mask.length} loss_mask entries for ${n} token ids`;
    if (b.logprobs.length !== n) return `branches.${i}: ${b.logprobs.length} logprobs for ${n} token ids`;
    if (b.prompt_length > n) return `branches.${i}: prompt_length ${b.prompt_length} beyond its ${n} token ids`;
    const bad = b.turns.find((ti) => line.turns[ti] === undefined);
    if (bad !== undefined) return `branches.${i}: turn ${bad} of ${line.turns.length}`;
    if (b.turns.some((ti, k) => k > 0 && ti <= b.turns[k - 1]!))
      return `branches.${i}: turns ${JSON.stringify(b.turns)} not in increasing order`;
    // A branch is its first turn's prompt extended turn by turn: it ends with its last turn's prompt and completion.
    const first = line.turns[b.turns[0]!]!;
    const last = line.turns[b.turns.at(-1)!]!;
    if (first.prompt_token_ids && first.prompt_token_ids.length !== b.prompt_length)
      return `branches.${i}: prompt_length ${b.prompt_length}, its first turn's prompt ${first.prompt_token_ids.length}`;
    if (last.prompt_token_ids && last.completion_token_ids) {
      const end = last.prompt_token_ids.length + last.completion_token_ids.length;
      if (end !== n) return `branches.${i}: ${n} token ids, its last turn ends at ${end}`;
    }
  }
  return undefined;
}
