import { describe, expect, it } from "vitest";
import { clientAddress } from "@/lib/http/client-address";

// As a route handler sees it: OncePay's server has appended its peer last.
function forwardedFor(value: string | undefined): Headers {
  return new Headers(value === undefined ? {} : { "x-forwarded-for": value });
}

describe("the client's address for per-address limits", () => {
  it("is the peer the server appended when no proxy is in front, whatever the caller forged", () => {
    expect(clientAddress(forwardedFor("127.0.0.1"), 0)).toBe("127.0.0.1");
    expect(clientAddress(forwardedFor("6.6.6.6, 127.0.0.1"), 0)).toBe("127.0.0.1");
  });

  it("is the entry the trusted balancer appended, whatever the caller forged before it", () => {
    expect(clientAddress(forwardedFor("6.6.6.6, 10.1.2.3, 127.0.0.1"), 1)).toBe("10.1.2.3");
    expect(clientAddress(forwardedFor("10.1.2.3, 127.0.0.1"), 1)).toBe("10.1.2.3");
  });

  it("counts from the right past every trusted proxy", () => {
    expect(clientAddress(forwardedFor("6.6.6.6, 10.1.2.3, 192.168.0.5, 127.0.0.1"), 2)).toBe(
      "10.1.2.3",
    );
  });

  it("folds IPv4-mapped IPv6 into IPv4, so one client is one bucket", () => {
    expect(clientAddress(forwardedFor("::FFFF:10.0.0.7"), 0)).toBe("10.0.0.7");
  });

  it("names no address 'unknown' rather than failing, and bounds what a caller can send", () => {
    expect(clientAddress(forwardedFor(undefined), 0)).toBe("unknown");
    expect(clientAddress(forwardedFor(" , "), 0)).toBe("unknown");
    expect(clientAddress(forwardedFor(`${"x".repeat(5000)}, 127.0.0.1`), 1)).toHaveLength(64);
  });

  it("finds no address when fewer hops arrived than proxies are trusted", () => {
    expect(clientAddress(forwardedFor("127.0.0.1"), 1)).toBe("unknown");
  });
});
