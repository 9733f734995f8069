/**
 * Bounded output capture for sandbox backends (Docker, Singularity): keeps a fixed head and a rolling tail
 * so a command printing gigabytes costs bounded memory, and renders exactly like `capOutput` would have
 * rendered the whole text.
 */
import { DEFAULT_OUTPUT_CAP } from "../base.js";

export class OutputCollector {
  private head = "";
  private tail = "";
  private total = 0;

  constructor(private readonly cap: number = DEFAULT_OUTPUT_CAP) {}

  get length(): number {
    return this.total;
  }

  push(chunk: string): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    if (this.head.length < this.cap) {
      const room = this.cap - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
      if (chunk.length === 0) return;
    }
    this.tail += chunk;
    // Trim lazily (at 2x) so a stream of small chunks does not re-slice on every push.
    if (this.tail.length > this.cap * 2) this.tail = this.tail.slice(this.tail.length - this.cap);
  }

  render(): { text: string; truncated: boolean } {
    if (this.total <= this.cap) return { text: this.head + this.tail, truncated: false };
    const headLen = Math.floor(this.cap * 0.4);
    const tailLen = this.cap - headLen;
    const omitted = this.total - this.cap;
    // The last tailLen chars of the whole text: from the tail buffer, topped up from the head if short.
    let tailText = this.tail.slice(Math.max(0, this.tail.length - tailLen));
    if (tailText.length < tailLen)
      tailText = this.head.slice(this.head.length - (tailLen - tailText.length)) + tailText;
    return {
      text: `${this.head.slice(0, headLen)}\n\n... [OUTPUT TRUNCATED - ${omitted} chars omitted out of ${this.total} total; cap is ${this.cap} chars] ...\n\n${tailText}`,
      truncated: true,
    };
  }
}
