import { describe, expect, it } from "vitest";
import { serverProblemResponse } from "@/lib/http/server-problems";

describe("serverProblemResponse", () => {
  it("answers an unreachable database with 503 problem+json and Retry-After: 2", async () => {
    const response = serverProblemResponse("database-unavailable");
    expect(response.status).toBe(503);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("retry-after")).toBe("2");
    expect(await response.json()).toMatchObject({
      type: "/problems/database-unavailable",
      status: 503,
    });
  });

  it("answers anything else with a 500 that invites no particular wait", async () => {
    const response = serverProblemResponse("internal-error");
    expect(response.status).toBe(500);
    expect(response.headers.get("retry-after")).toBeNull();
    expect(await response.json()).toMatchObject({
      type: "/problems/internal-error",
      status: 500,
      title: "Internal server error",
    });
  });
});
