/**
 * The refund form's amount: what a person types, as the shop shows money
 * ("12.50", "$12.50", "1,200"), read into minor units (cents) before anything
 * is sent, with a message that says what to type instead. The server checks
 * again (it alone knows what refunds are in flight); this only spares a
 * request that cannot succeed.
 */

/**
 * Minor units per unit, as the shop displays money (components/ui/money.ts
 * divides by 100): the shop sells in dollars, whose cent is a hundredth.
 */
const MINOR_DIGITS = 2;
const MINOR_PER_UNIT = 10 ** MINOR_DIGITS;

export type AmountReading =
  /** `amount` null: the field was left blank, so all that is left is refunded. */
  { ok: true; amount: number | null } | { ok: false; message: string };

// Digits with optional thousands commas, then at most one point and its digits.
const AMOUNT = /^(\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d*))?$/;

/**
 * Reads `text` as an amount to refund of an order with `left` minor units
 * still refundable. `format` writes minor units as the page does, for the
 * messages ("$50.50").
 */
export function readRefundAmount(
  text: string,
  left: number,
  format: (minorUnits: number) => string,
): AmountReading {
  // A leading currency sign (as the page writes amounts) and spaces are allowed.
  const typed = text.trim().replace(/^\$\s*/, "");
  if (typed === "") return { ok: true, amount: null };
  const example = `Enter an amount such as ${format(Math.min(left, 1250))}`;
  if (typed.startsWith("-")) return { ok: false, message: `${example}: it cannot be negative.` };
  const match = AMOUNT.exec(typed);
  if (!match || (match[1] === undefined && !match[2]))
    return { ok: false, message: `${example}, or leave it blank to refund all that is left.` };
  const fraction = match[2] ?? "";
  if (fraction.length > MINOR_DIGITS)
    return {
      ok: false,
      message: `${example}: a cent is the smallest amount, so at most ${MINOR_DIGITS} digits after the point.`,
    };
  const whole = Number((match[1] ?? "0").replaceAll(",", ""));
  const amount = whole * MINOR_PER_UNIT + Number(fraction.padEnd(MINOR_DIGITS, "0"));
  if (amount === 0)
    return { ok: false, message: `${example}: a refund must be more than nothing.` };
  if (amount > left)
    return {
      ok: false,
      message: `Only ${format(left)} is left to refund on this order: enter at most that, or leave the field blank to refund it all.`,
    };
  return { ok: true, amount };
}

/** Minor units as the field shows them when it is filled in for the shopper: "50.50", no sign. */
export function amountFieldText(minorUnits: number): string {
  return (minorUnits / MINOR_PER_UNIT).toFixed(MINOR_DIGITS);
}
