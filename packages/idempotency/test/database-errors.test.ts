import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "../src/index.js";

describe("isDatabaseUnavailable", () => {
  it.each([
    [
      "a refused connection",
      Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    ],
    [
      "PostgreSQL shutting down",
      Object.assign(new Error("terminating connection"), { code: "57P01" }),
    ],
    ["a connection that ended mid-query", new Error("Connection terminated unexpectedly")],
    [
      "a client lent out as its connection died",
      new Error("Client has encountered a connection error and is not queryable"),
    ],
    ["a closed client", new Error("Client was closed and is not queryable")],
    [
      "Prisma's wrapper around pg's",
      new Error("Invalid invocation", { cause: new Error("Connection terminated unexpectedly") }),
    ],
  ])("is true for %s", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a unique violation", Object.assign(new Error("duplicate key value"), { code: "23505" })],
    ["a syntax error", Object.assign(new Error("syntax error at or near"), { code: "42601" })],
    ["a bug of ours", new TypeError("Cannot read properties of undefined")],
    ["no error at all", undefined],
  ])("is false for %s", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
