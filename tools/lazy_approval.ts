/**
 * A task's approval service that loads the approval code (tools/approval/, with its command analysis and the
 * YAML allow-list reader: about 50–100 ms of module loading per thread) on the first command it judges. A
 * task whose tools never declare a command or a write (the in-loop tools) never loads it; one that does gets
 * the same gate, made with the same options, before its first decision.
 */
import type { Usage } from "../src/core/chat.js";
import type { ApprovalRecord } from "../src/core/records.js";
import type { ApprovalGate, ApprovalGateOptions, ApprovalService } from "./approval/gate.js";

export type LazyApprovalService = Pick<ApprovalService, "gate" | "records" | "usage">;

const NO_RECORDS: readonly ApprovalRecord[] = Object.freeze([]);

export function lazyApprovalGate(options: ApprovalGateOptions): LazyApprovalService {
  return new LazyApproval(options);
}

/** A class, not an object literal with getters (which V8 keeps as a slow dictionary): one is made per task. */
class LazyApproval implements LazyApprovalService {
  private loading: Promise<ApprovalService> | undefined;
  private service: ApprovalService | undefined;

  constructor(private readonly options: ApprovalGateOptions) {}

  readonly gate: ApprovalGate = async (command, info) => (await this.load()).gate(command, info);

  get records(): ApprovalRecord[] {
    return this.service?.records ?? (NO_RECORDS as ApprovalRecord[]);
  }

  /** The gate's own starting value until it exists (its approver has spent nothing before then). */
  get usage(): Usage {
    return this.service?.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  }

  private load(): Promise<ApprovalService> {
    this.loading ??= import("./approval/gate.js").then((m) => {
      this.service = m.createApprovalGate(this.options);
      return this.service;
    });
    return this.loading;
  }
}
