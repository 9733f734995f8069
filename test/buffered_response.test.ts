/** The light Response and Headers of buffered model replies behave as the standard ones where the SDK looks. */
import { describe, expect, it } from "vitest";
import { BufferedResponse, ResponseHeaders } from "../src/models/buffered_response.js";

const raw = [
  "Content-Type",
  "application/json",
  "X-Request-Id",
  "r1",
  "Set-Cookie",
  "a=1",
  "set-cookie",
  "b=2",
  "Via",
  "p1",
  "via",
  "p2",
];

describe("ResponseHeaders", () => {
  it("reads like undici's Headers over the same fields", () => {
    const light = new ResponseHeaders(raw) as unknown as Headers;
    const real = new Headers();
    for (let i = 0; i < raw.length; i += 2) real.append(raw[i]!, raw[i + 1]!);
    expect(light).toBeInstanceOf(Headers);
    expect([...light.entries()]).toEqual([...real.entries()]);
    expect([...light]).toEqual([...real]);
    expect([...light.keys()]).toEqual([...real.keys()]);
    expect([...light.values()]).toEqual([...real.values()]);
    for (const name of ["content-type", "X-REQUEST-ID", "via", "set-cookie", "missing"])
      expect(light.get(name)).toBe(real.get(name));
    expect(light.has("Via")).toBe(true);
    expect(light.getSetCookie()).toEqual(real.getSetCookie());
    const seen: string[] = [];
    light.forEach((v, k) => seen.push(`${k}=${v}`));
    expect(seen).toEqual([...real].map(([k, v]) => `${k}=${v}`));
  });

  it("is read-only", () => {
    const light = new ResponseHeaders(raw) as unknown as Headers;
    expect(() => light.set("a", "b")).toThrow(TypeError);
    expect(() => light.append("a", "b")).toThrow(TypeError);
    expect(() => light.delete("via")).toThrow(TypeError);
  });
});

describe("BufferedResponse", () => {
  const make = (status = 200) =>
    new BufferedResponse(Buffer.from('{"a":"é"}'), {
      status,
      statusText: "OK",
      headers: new ResponseHeaders(raw) as unknown as Headers,
    }) as unknown as Response;

  it("is a Response whose body is read once, by any of the readers", async () => {
    const r = make();
    expect(r).toBeInstanceOf(Response);
    expect([r.status, r.ok, r.statusText, r.url, r.redirected]).toEqual([200, true, "OK", "", false]);
    expect(make(404).ok).toBe(false);
    expect(r.bodyUsed).toBe(false);
    const copy = r.clone();
    expect(await r.json()).toEqual({ a: "é" });
    expect(r.bodyUsed).toBe(true);
    await expect(r.text()).rejects.toThrow(TypeError);
    expect(() => r.clone()).toThrow(TypeError);
    expect(await copy.text()).toBe('{"a":"é"}');
    expect(await new Response(make().body).json()).toEqual({ a: "é" });
    expect(new TextDecoder().decode(await make().arrayBuffer())).toBe('{"a":"é"}');
    expect((await make().blob()).type).toBe("application/json");
  });
});
