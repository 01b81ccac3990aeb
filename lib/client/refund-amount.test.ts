import { describe, expect, it } from "vitest";
import { amountFieldText, readRefundAmount } from "./refund-amount";

// As the page writes dollars (components/ui/money.ts).
const usd = (minorUnits: number) => `$${(minorUnits / 100).toFixed(2)}`;
const read = (text: string, left = 5050) => readRefundAmount(text, left, usd);

describe("the refund form's amount", () => {
  it("is all that is left when the field is blank", () => {
    expect(read("")).toEqual({ ok: true, amount: null });
    expect(read("   ")).toEqual({ ok: true, amount: null });
  });

  it.each([
    ["12", 1200],
    ["12.5", 1250],
    ["12.50", 1250],
    ["$12.50", 1250],
    [" $ 0.99 ", 99],
    [".5", 50],
    ["7.", 700],
    ["50.50", 5050],
    ["1,234.56", 123456],
  ])("reads %j as %i cents, as the shop writes money", (text, cents) => {
    expect(read(text, 1_000_000)).toEqual({ ok: true, amount: cents });
  });

  it.each([
    ["twelve", /Enter an amount such as \$12\.50, or leave it blank/],
    ["12,50", /Enter an amount such as/],
    ["1.2.3", /Enter an amount such as/],
    [".", /Enter an amount such as/],
    ["-5", /cannot be negative/],
    ["0", /more than nothing/],
    ["0.00", /more than nothing/],
    ["1.005", /at most 2 digits after the point/],
  ])("refuses %j with a message that says what to type", (text, message) => {
    const reading = read(text);
    expect(reading.ok).toBe(false);
    expect(reading.ok ? "" : reading.message).toMatch(message);
  });

  it("refuses more than is left, naming what is left", () => {
    expect(read("50.51")).toEqual({
      ok: false,
      message:
        "Only $50.50 is left to refund on this order: enter at most that, or leave the field blank to refund it all.",
    });
    expect(read("50.50")).toEqual({ ok: true, amount: 5050 });
  });

  it("offers a small example when little is left", () => {
    const reading = read("abc", 300);
    expect(reading.ok ? "" : reading.message).toMatch(/^Enter an amount such as \$3\.00/);
  });

  it("writes an amount back into the field as it reads it", () => {
    expect(amountFieldText(5050)).toBe("50.50");
    expect(read(amountFieldText(1205))).toEqual({ ok: true, amount: 1205 });
  });
});
