import { describe, expect, it } from "vitest";
import { KeyRequestAnswer } from "@/lib/generated/prisma/enums";
import { answerInWords, attemptName, ordinal } from "@/lib/pages/key-requests";

describe("the key page's words for a key's requests", () => {
  it.each([
    [1, "1st"],
    [2, "2nd"],
    [3, "3rd"],
    [4, "4th"],
    [11, "11th"],
    [12, "12th"],
    [13, "13th"],
    [21, "21st"],
    [22, "22nd"],
    [101, "101st"],
    [111, "111th"],
  ])("calls attempt %i the %s", (n, expected) => {
    expect(ordinal(n)).toBe(expected);
  });

  it("names an attempt as a shopper counts them", () => {
    expect(attemptName(2)).toBe("Your browser's 2nd attempt");
  });

  it.each(Object.values(KeyRequestAnswer))(
    "says what a %s answer did in plain words, without the database's",
    (answer) => {
      const words = answerInWords({ answer, status: answer === "conflict" ? 409 : 201 });
      expect(words.length).toBeGreaterThan(20);
      expect(words).not.toMatch(/\brow\b|INSERT|ON CONFLICT|commit|lease|fingerprint/i);
    },
  );

  it("tells a replay, a 409 and a 422 apart, each with its technical name in brackets", () => {
    expect(answerInWords({ answer: "replay", status: 201 })).toMatch(/stored answer.*\(replay/);
    expect(answerInWords({ answer: "conflict", status: 409 })).toMatch(/still paying.*\(409\)/);
    expect(answerInWords({ answer: "mismatch", status: 422 })).toMatch(/different cart.*\(422\)/);
    expect(answerInWords({ answer: "completed", status: 402 })).toMatch(/declined/);
  });

  it("tells a refund's key's answers in a refund's words, not a payment's", () => {
    const refund = (
      answer: (typeof KeyRequestAnswer)[keyof typeof KeyRequestAnswer],
      status: number,
    ) => answerInWords({ answer, status }, "refund");
    expect(refund("completed", 201)).toBe(
      "refunded: the refund was made and this answer stored with the key",
    );
    expect(refund("completed", 422)).toBe("answered 422, and that answer was stored with the key");
    expect(refund("conflict", 409)).toMatch(/still refunding.*\(409\)/);
    expect(refund("mismatch", 422)).toMatch(/different refund.*\(422\)/);
    for (const answer of Object.values(KeyRequestAnswer))
      expect(refund(answer, 201)).not.toMatch(/\bpaid|paying|cart|order was made/);
  });
});
