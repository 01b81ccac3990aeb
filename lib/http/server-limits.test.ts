import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import {
  boundServer,
  connectionBound,
  HEADERS_TIMEOUT_MS,
  openFilesLimit,
  REQUEST_TIMEOUT_MS,
} from "./server-limits";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes`;

describe("a server's bounds", () => {
  it("reads the soft limit on open files", () => {
    expect(openFilesLimit(LIMITS)).toBe(1024);
  });

  it("counts a limit it cannot read as no limit", () => {
    expect(openFilesLimit("")).toBe(Infinity);
    expect(openFilesLimit(LIMITS.replace("1024 ", "unlimited "))).toBe(Infinity);
  });

  it("reads this process's own limit", () => {
    expect(openFilesLimit()).toBeGreaterThan(0);
  });

  it("leaves a quarter of the descriptors for everything but connections", () => {
    expect(connectionBound(1024)).toBe(768);
    expect(connectionBound(1)).toBe(1);
    expect(connectionBound(Infinity)).toBe(Infinity);
  });

  it("sets the timeouts and the connection bound on a server made elsewhere", () => {
    const server = boundServer(createServer(), 256);
    expect({
      headers: server.headersTimeout,
      request: server.requestTimeout,
      connections: server.maxConnections,
    }).toEqual({ headers: HEADERS_TIMEOUT_MS, request: REQUEST_TIMEOUT_MS, connections: 192 });
  });
});
