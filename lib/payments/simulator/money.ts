/** Minor units as Stripe writes money in messages: `$19.00`, `€7.50`, `¥1,900`. */
export function money(amount: number, currency: string): string {
  const format = new Intl.NumberFormat("en-US", {
    style: "currency",
    currency: currency.toUpperCase(),
  });
  return format.format(amount / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2));
}
