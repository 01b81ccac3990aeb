import { describe, expect, it } from "vitest";
import { laneDatabaseUrl } from "./lane-databases";

describe("a lane's database", () => {
  it("sits beside DATABASE_URL's, named after it and the lane, with the same server and options", () => {
    expect(
      laneDatabaseUrl(
        "postgresql://postgres@127.0.0.1:5432/oncepay_ci_1?sslmode=disable",
        "own-app",
      ),
    ).toBe("postgresql://postgres@127.0.0.1:5432/oncepay_ci_1_own_app?sslmode=disable");
  });

  it("keeps a name that needs quoting in a URL whole", () => {
    expect(laneDatabaseUrl("postgresql://u:p@db:5433/my%20db", "own-postgres")).toBe(
      "postgresql://u:p@db:5433/my%20db_own_postgres",
    );
  });

  it("refuses a URL that names no database", () => {
    expect(() => laneDatabaseUrl("postgresql://postgres@127.0.0.1:5432", "own-app")).toThrow(
      /names no database/,
    );
  });
});
