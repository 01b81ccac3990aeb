const formatters = new Map<string, Intl.NumberFormat>();

/** Formats an amount in minor units (cents) as money, e.g. 4200 → "$42.00". */
export function formatMoney(minorUnits: number, currency = "usd"): string {
  const code = currency.toUpperCase();
  let formatter = formatters.get(code);
  if (!formatter) {
    // A fixed locale, so the server and the browser render the same string.
    formatter = new Intl.NumberFormat("en-US", { style: "currency", currency: code });
    formatters.set(code, formatter);
  }
  return formatter.format(minorUnits / 100);
}
