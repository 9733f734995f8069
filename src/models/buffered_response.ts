/**
 * A `Response` over a body already in memory, with read-only headers straight from `node:http`'s raw list.
 *
 * Why not `new Response(...)` and `new Headers(...)`: undici's constructors, its header validation on each
 * `append` and its sorted-list cache cost about 4 % of a run's CPU at one response per agent turn, for a body
 * the SDK reads whole anyway. Both classes inherit from the standard prototypes, so `instanceof Response` and
 * `instanceof Headers` hold, and override every member those prototypes define (an inherited getter would
 * throw: these objects have no undici internals behind them). The prototypes are linked on first use, since
 * touching `Headers` or `Response` loads undici (about 30 ms per thread at start-up).
 */

let linked = false;

function linkPrototypes(): void {
  if (linked) return;
  linked = true;
  Object.setPrototypeOf(ResponseHeaders.prototype, Headers.prototype);
  Object.setPrototypeOf(BufferedResponse.prototype, Response.prototype);
}

/** Immutable response headers: names lowercased, repeated fields joined with ", " (set-cookie kept apart). */
export class ResponseHeaders {
  readonly #values = new Map<string, string>();
  readonly #cookies: string[] = [];
  #sorted: [string, string][] | undefined;

  /** `raw`: alternating names and values, as `IncomingMessage.rawHeaders`. */
  constructor(raw: readonly string[]) {
    linkPrototypes();
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const value = raw[i + 1]!;
      if (name === "set-cookie") this.#cookies.push(value);
      const seen = this.#values.get(name);
      this.#values.set(name, seen === undefined ? value : `${seen}, ${value}`);
    }
  }

  get(name: string): string | null {
    return this.#values.get(String(name).toLowerCase()) ?? null;
  }
  has(name: string): boolean {
    return this.#values.has(String(name).toLowerCase());
  }
  getSetCookie(): string[] {
    return [...this.#cookies];
  }
  /** Sorted by name, one entry per set-cookie field, as the Fetch standard iterates headers. */
  #list(): [string, string][] {
    if (!this.#sorted) {
      this.#sorted = [];
      for (const name of [...this.#values.keys()].sort()) {
        if (name === "set-cookie") for (const c of this.#cookies) this.#sorted.push([name, c]);
        else this.#sorted.push([name, this.#values.get(name)!]);
      }
    }
    return this.#sorted;
  }
  entries(): IterableIterator<[string, string]> {
    return this.#list()
      .map((e) => [e[0], e[1]] as [string, string])
      [Symbol.iterator]();
  }
  keys(): IterableIterator<string> {
    return this.#list()
      .map((e) => e[0])
      [Symbol.iterator]();
  }
  values(): IterableIterator<string> {
    return this.#list()
      .map((e) => e[1])
      [Symbol.iterator]();
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.#list()) callback.call(thisArg, value, name, this as unknown as Headers);
  }
  append(): never {
    throw new TypeError("Headers of a response are immutable");
  }
  set(): never {
    throw new TypeError("Headers of a response are immutable");
  }
  delete(): never {
    throw new TypeError("Headers of a response are immutable");
  }
}
export class BufferedResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly url = "";
  readonly redirected = false;
  readonly type = "basic";
  #buf: Buffer;
  #used = false;
  #stream: ReadableStream<Uint8Array> | undefined;

  constructor(buf: Buffer, init: { status: number; statusText: string; headers: Headers }) {
    linkPrototypes();
    this.#buf = buf;
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
  }
  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }
  get body(): ReadableStream<Uint8Array> {
    if (this.#stream === undefined) {
      const bytes = this.#take();
      this.#stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
          controller.close();
        },
      });
    }
    return this.#stream;
  }
  get bodyUsed(): boolean {
    return this.#used;
  }
  #take(): Buffer {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    return this.#buf;
  }
  async text(): Promise<string> {
    return this.#take().toString("utf8");
  }
  async json(): Promise<any> {
    return JSON.parse(this.#take().toString("utf8"));
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.#take();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.arrayBuffer());
  }
  async blob(): Promise<Blob> {
    return new Blob([await this.arrayBuffer()], { type: this.headers.get("content-type") ?? "" });
  }
  async formData(): Promise<FormData> {
    throw new TypeError("formData() is not supported for model responses");
  }
  clone(): Response {
    if (this.#used) throw new TypeError("Response.clone: Body has already been consumed.");
    return new BufferedResponse(this.#buf, {
      status: this.status,
      statusText: this.statusText,
      headers: this.headers,
    }) as unknown as Response;
  }
}
