/** Main → workers: `{type: "abort-all"}` on this channel aborts every in-flight loop of the run. */
export const CANCEL_CHANNEL = "hermes-batch:cancel";

export type CancelMessage = { type: "abort-all"; runDir: string };
