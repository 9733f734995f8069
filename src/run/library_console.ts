/**
 * Libraries print to the console on their own (the openai SDK dumps every SSE chunk it cannot parse with
 * console.error). In a worker thread that would land on the run's terminal between progress lines, repeated
 * for each chunk. Here, console output of a worker is kept with the task that was running when it was printed
 * (the task reports its own error anyway) and goes to events.log through the task's outcome message;
 * `HERMES_BATCH_DEBUG=1` still shows it on stderr.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { format } from "node:util";

const MAX_NOTES = 20;
const MAX_NOTE_CHARS = 300;

const current = new AsyncLocalStorage<string[]>();
let installed = false;
let perTask = true;
/** Output of a thread that does not tie it to tasks: handed to the next task that ends on the thread. */
const threadNotes: string[] = [];

/**
 * Whether console output is tied to the task that printed it. That needs an AsyncLocalStorage, which in Node 20
 * runs hooks on every promise of the thread (a few % of a worker's CPU): only worth it when a library that
 * prints can run. The openai SDK is used only for streamed requests; plain ones go out directly.
 */
export function tieConsoleToTasks(on: boolean): void {
  perTask = on;
}

export function captureLibraryConsole(): void {
  if (installed) return;
  installed = true;
  const keep = (...args: unknown[]) => {
    const text = format(...args);
    if (process.env.HERMES_BATCH_DEBUG) process.stderr.write(`${text}\n`);
    const notes = perTask ? current.getStore() : threadNotes;
    if (!notes || notes.length >= MAX_NOTES) return;
    const line = text.replace(/\s+/g, " ").trim();
    notes.push(line.length > MAX_NOTE_CHARS ? `${line.slice(0, MAX_NOTE_CHARS)}…` : line);
  };
  console.error = keep;
  console.warn = keep;
  console.log = keep;
  console.info = keep;
  console.debug = keep;
}

/** Runs `fn` with console output collected into the returned notes. */
export async function withConsoleNotes<T>(fn: () => Promise<T>): Promise<{ value: T; notes: string[] }> {
  if (!perTask) {
    const value = await fn();
    return {
      value,
      notes: threadNotes.splice(0).map((n) => `(printed on its worker thread, maybe by another task) ${n}`),
    };
  }
  const notes: string[] = [];
  const value = await current.run(notes, fn);
  return { value, notes };
}
