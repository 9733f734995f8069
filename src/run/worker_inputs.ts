/**
 * What a worker thread needs from the main thread before its first task, delivered after the pool has started.
 * The pool starts as soon as the run's configuration is parsed, so that the threads load their modules while the
 * main thread loads its own and checks the run; the run folder, the configuration's defaults and the files beside
 * it come later, on a BroadcastChannel.
 *
 * A message on a BroadcastChannel reaches only the channels open when it is posted, so each side asks or answers:
 * a thread posts `need` once its channel is open, the main thread answers every `need` once it has the inputs, and
 * posts them once more when they become known (for the threads that asked earlier). A thread started later (one
 * that replaces a crashed thread) asks again and gets its answer.
 */
import { BroadcastChannel } from "node:worker_threads";
import type { ChatMessage } from "../core/chat.js";
import type { RunConfig } from "../config/run_config.js";
import type { McpServerCatalog } from "../../tools/mcp/types.js";

export interface WorkerInputs {
  config: RunConfig;
  runDir: string;
  /** The prefill messages, read and validated once by the main thread. */
  prefill?: ChatMessage[];
  /** The user's command_allowlist, read once by the main thread (a bad file stops the run there). */
  allowlist: string[];
  /** The run's MCP servers and their tools, listed once by the main thread. */
  mcp?: McpServerCatalog[];
}

type InputsMessage = { type: "need" } | { type: "inputs"; inputs: WorkerInputs };

let channels = 0;

/** A channel name no other pool of this process uses. */
export function workerInputsChannelName(): string {
  return `hermes-batch:inputs:${process.pid}:${++channels}`;
}

/** Keeps a channel from holding its thread's event loop open. */
function unref(channel: BroadcastChannel): void {
  (channel as unknown as { unref?: () => void }).unref?.();
}

/** The main thread's side: answers the threads' requests once `provide` has been called. */
export interface WorkerInputsOffer {
  provide(inputs: WorkerInputs): void;
  close(): void;
}

export function offerWorkerInputs(name: string): WorkerInputsOffer {
  const channel = new BroadcastChannel(name);
  let inputs: WorkerInputs | undefined;
  const post = (value: WorkerInputs) => channel.postMessage({ type: "inputs", inputs: value } satisfies InputsMessage);
  channel.onmessage = (ev) => {
    if ((ev as unknown as { data: InputsMessage }).data?.type === "need" && inputs) post(inputs);
  };
  unref(channel);
  return {
    provide(value) {
      if (inputs) throw new Error("worker inputs given twice");
      inputs = value;
      post(value);
    },
    close: () => channel.close(),
  };
}

/** A worker thread's side: resolves with the inputs the main thread provides. */
export function receiveWorkerInputs(name: string): Promise<WorkerInputs> {
  return new Promise((resolve) => {
    const channel = new BroadcastChannel(name);
    channel.onmessage = (ev) => {
      const msg = (ev as unknown as { data: InputsMessage }).data;
      if (msg?.type !== "inputs") return;
      channel.close();
      resolve(msg.inputs);
    };
    channel.postMessage({ type: "need" } satisfies InputsMessage);
  });
}
